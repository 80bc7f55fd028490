import type { Database } from "../../db/client";
import type { Env } from "../../env";
import type { Passage } from "../../contracts/turn";
import type { Actor } from "../billing/metering";

/**
 * THE delegation interface (one hop). A delegate id's prefix picks its
 * resolver: `agt_` → our own agents (src/services/agents/delegates.ts), `a2a_` →
 * registered A2A agents (src/services/a2a/delegate.ts); src/capabilities.ts registers both. The
 * delegation tool provider (./provider.ts) and agent creation both go through
 * `resolverFor`, so chats' `delegate_agent_ids`, agents' `delegate_agent_ids`
 * and `a2a_agent_ids` obey the same rules.
 */

/** Who delegates: the caller's organization, tenant and knowledge base. */
export interface DelegationOrigin {
  db: Database;
  env: Env;
  organizationId: string;
  environmentId: string;
  tenantId: string;
  knowledgeBaseId: string;
  /** The agent that delegates (an agent may not name itself), or null for a chat. */
  agentId?: string | null;
  /** 0 for a caller's turn; a delegate (depth 1) may not delegate further. */
  depth: number;
}

export interface DelegateInfo {
  id: string;
  name: string;
  description: string | null;
}

export interface DelegationCall {
  question: string;
  /** The run that delegates (parent_run_id of the delegate's run). */
  parentRunId: string | null;
  actor: Actor;
  signal: AbortSignal;
  streaming: boolean;
}

export interface DelegationResult {
  /** The delegate's answer, returned to the caller as a citable passage. */
  passage: Passage;
  /** The id recorded in `delegatedAgentIds`. */
  delegatedAgentId: string;
  /** The delegate's run, when the delegate is one of our agents. */
  runId?: string | null;
  isError?: boolean;
  text?: string;
}

export interface DelegateResolver {
  prefix: string;
  /** The delegate, or null when it does not exist or may not be used from `origin` (same answer: never reveal). */
  resolve(origin: DelegationOrigin, id: string): Promise<DelegateInfo | null>;
  /** Delegates the question (rules re-checked at call time). */
  delegate(origin: DelegationOrigin, id: string, call: DelegationCall): Promise<DelegationResult>;
}

const resolvers: DelegateResolver[] = [];

export function registerDelegateResolver(r: DelegateResolver) {
  if (!resolvers.some((x) => x.prefix === r.prefix)) resolvers.push(r);
}

export function resolverFor(id: string): DelegateResolver | null {
  return resolvers.find((r) => id.startsWith(r.prefix)) ?? null;
}
