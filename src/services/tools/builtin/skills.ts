import { terms } from "../../../lib/text";
import type { ToolProvider } from "../../../contracts/tools";

/** Share of a skill description's terms a task must contain for local-extractive to load it. */
export const AUTO_SKILL_OVERLAP = 0.3;

/** How much of the task matches a skill's description (0..1, over the description's distinct terms). */
export function skillOverlap(task: string, description: string): number {
  const want = new Set(terms(description));
  if (!want.size) return 0;
  const have = new Set(terms(task));
  let hit = 0;
  for (const t of want) if (have.has(t)) hit++;
  return hit / want.size;
}

/**
 * `load_skill`: skills attached in `auto` mode show only their name and
 * description (in this tool's description); the model loads a body by name
 * when the task matches. Offline, the plan loads the best-matching skill when
 * the task shares enough terms with its description.
 */
export const skillsProvider: ToolProvider = {
  name: "skills",
  async tools(_scope, settings) {
    const skills = settings.autoSkills;
    if (!skills.length) return [];
    const catalogue = skills.map((s) => `- ${s.name}: ${s.description}`).join("\n");
    return [
      {
        name: "load_skill",
        description: `Load the full instructions of a skill by name when the task matches its description. Available skills:\n${catalogue}`,
        inputSchema: {
          type: "object",
          properties: { name: { type: "string", enum: skills.map((s) => s.name) } },
          required: ["name"],
          additionalProperties: false,
        },
        kind: "text",
        origin: { type: "internal" },
        plan(question) {
          let best: { name: string; score: number } | null = null;
          for (const s of skills) {
            const score = skillOverlap(question, `${s.name} ${s.description}`);
            if (score >= AUTO_SKILL_OVERLAP && (!best || score > best.score)) best = { name: s.name, score };
          }
          return best ? { name: best.name } : null;
        },
        async execute(input) {
          const skill = skills.find((s) => s.name === input.name);
          if (!skill) return { text: `No skill named "${String(input.name)}". Available: ${skills.map((s) => s.name).join(", ")}`, isError: true };
          return { text: `Skill "${skill.name}" instructions (follow them for this task):\n${skill.body}` };
        },
      },
    ];
  },
};
