import { safeToolName, TOOL_NAME_MAX, type Tool, type ToolProvider, type ToolSettings, type TurnScope, type ValidationScope } from "../../contracts/tools";

export interface Toolbox {
  tools: Tool[];
  get(name: string): Tool | undefined;
}

/**
 * The toolbox of one turn: every registered provider's tools for these
 * settings, with names made safe and unique within the turn (a numeric suffix
 * on a clash). A provider that fails is left out and logged: one broken remote
 * never breaks a turn.
 */
export async function assembleToolbox(
  scope: TurnScope,
  settings: ToolSettings,
  providers: readonly ToolProvider[],
): Promise<Toolbox> {
  const lists = await Promise.all(
    providers.map((p) =>
      p.tools(scope, settings).catch((e) => {
        if (!(e instanceof Error && e.name === "AbortError")) console.error(`toolbox: provider ${p.name} failed in chat ${scope.chat.id}:`, e instanceof Error ? e.message : e);
        return [] as Tool[];
      }),
    ),
  );
  const byName = new Map<string, Tool>();
  for (const tool of lists.flat()) {
    const base = safeToolName(tool.name);
    let name = base;
    for (let n = 2; byName.has(name); n++) name = `${base.slice(0, TOOL_NAME_MAX - String(n).length - 1)}_${n}`;
    byName.set(name, { ...tool, name });
  }
  return { tools: [...byName.values()], get: (name) => byName.get(name) };
}

/** Every provider's up-front checks (400 naming the field), before the turn starts and before credits are spent. */
export async function validateToolSettings(
  scope: ValidationScope,
  settings: ToolSettings,
  providers: readonly ToolProvider[],
): Promise<void> {
  for (const p of providers) await p.validate?.(scope, settings);
}

/** Whether a provider of this name is registered (a capability that is not registered refuses its settings). */
export const hasProvider = (name: string, providers: readonly ToolProvider[]) =>
  providers.some((p) => p.name === name);
