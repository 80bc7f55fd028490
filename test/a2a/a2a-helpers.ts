import { call, testServer } from "../helpers";

/** Registers the local A2A agent (test/servers/a2a.ts) under a knowledge base. */
export const register = (auth: { cookie?: string; key?: string }, kbId: string, body: Record<string, unknown> = {}) =>
  call(`/knowledge-bases/${kbId}/a2a-agents`, {
    ...auth,
    body: { name: "Warranty oracle", cardUrl: `${testServer("a2a")}/.well-known/agent-card.json`, ...body },
  });
