import type { ServiceContext } from "../../contracts/context";
import type { TurnCommand } from "../../contracts/chat-session";
import type { AgentRun, Chat } from "../../db/schema";
import { authorizedTurnSearch, turnSearchedAhead } from "../chats/search-ahead";
import { startRun, type RunReads, type StartRun } from "./runs";

/**
 * Starts a run requested by a caller (REST and A2A), its turn's first search running beside the run's write
 * (README "Latency"): the request was authorized by the read that found the knowledge base, so the search need not
 * wait for the chat and the run to be written, nor for the chat's Durable Object. The turn uses it if its plan
 * searches the same (search-ahead.ts); a short follow-up in a continued or seeded conversation is searched with
 * its history instead.
 */
export async function startRunSearched(ctx: ServiceContext, s: StartRun & { reads?: RunReads }): Promise<{ run: AgentRun; chat: Chat; cmd: TurnCommand }> {
  const ahead = authorizedTurnSearch(ctx, s.kb, { content: s.content, agent_mode: s.agent.config.agent_mode });
  const started = await startRun(ctx.db, s);
  const count = s.chat ? (s.reads?.transcript?.count ?? 1) : (s.history?.length ?? 0);
  return { ...started, cmd: { ...started.cmd, searchedAhead: turnSearchedAhead(ctx, ahead, s.kb, { count }) } };
}
