import { registerCleanup } from "../cleanup";
import { agentsOfKnowledgeBase, archiveAgent } from "./agents";
import { armSchedule } from "./scheduler";

// Deleting a knowledge base archives its agents (runs kept) and turns their schedules off.
registerCleanup("knowledge_base", async ({ db, env, waitUntil }, kbId) => {
  for (const a of await agentsOfKnowledgeBase(db, kbId)) {
    await archiveAgent(db, a.id);
    if (a.scheduleCron) waitUntil(armSchedule(env, a.id).catch((e) => console.error(`agent ${a.id}: disarm failed`, e)));
  }
});
