/**
 * The capability registry: every tool provider, context provider and after-turn hook, one line each. A new
 * capability registers here and nowhere else. Imported only by entry points (the app, the Worker's handlers,
 * the Durable Objects), which hand it down: services and the answer pipeline read it from the ServiceContext
 * and TurnDeps (`capabilities`), never from here (npm run lint).
 */
import type { AfterTurnHook, Capabilities, ContextProvider, ToolProvider } from "./contracts/tools";
import { a2aDelegates } from "./services/a2a/delegate";
import { agentRunHook } from "./services/agents/hook";
import { agentDelegates } from "./services/agents/delegates";
import { connectorToolProvider } from "./services/connectors/provider";
import { delegationProvider } from "./services/delegation/provider";
import { registerDelegateResolver } from "./services/delegation/types";
import { mcpToolProvider } from "./services/mcp/provider";
import { memoryAfterTurn, memoryContext } from "./services/memory/turn";
import { sqlProvider } from "./services/tables/tool";
import { kbSearchProvider } from "./services/tools/builtin/kb-search";
import { skillsProvider } from "./services/tools/builtin/skills";
import { webSearchProvider } from "./services/tools/builtin/web-search";

// Delegates by id prefix: our agents (`agt_`) and external A2A agents (`a2a_`).
registerDelegateResolver(agentDelegates);
registerDelegateResolver(a2aDelegates);

export const TOOL_PROVIDERS: ToolProvider[] = [
  kbSearchProvider,
  webSearchProvider,
  skillsProvider,
  sqlProvider,
  connectorToolProvider,
  delegationProvider,
  // MCP tool servers enabled for the chat (or the agent): mcp__<server>__<tool>.
  mcpToolProvider,
];

export const CONTEXT_PROVIDERS: ContextProvider[] = [memoryContext];

export const AFTER_TURN_HOOKS: AfterTurnHook[] = [memoryAfterTurn, agentRunHook];

export const CAPABILITIES: Capabilities = { tools: TOOL_PROVIDERS, context: CONTEXT_PROVIDERS, afterTurn: AFTER_TURN_HOOKS };
