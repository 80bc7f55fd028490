import { and, eq } from "drizzle-orm";
import type { Message, Part, StreamResponse, Task } from "@a2a-js/sdk";
import { a2aAgents, type A2aAgent } from "../../db/schema";
import type { Env } from "../../env";
import { assertResolvesPublic, assertUrlAllowed, guardPolicy } from "../../lib/url-guard";
import { type DelegateResolver, type DelegationOrigin, type DelegationResult } from "../delegation/types";
import { headersOf, metadataOf, recordCallOutcome } from "./registrations";
import { config, DEFAULT_A2A_TIMEOUT_MS } from "../../lib/config";

/**
 * Registered A2A agents as delegates (`a2a_…`), through the one delegation
 * interface (src/services/delegation). A registration serves the chats and
 * agents of its own knowledge base only. A call sends the question with
 * SendMessage (SendStreamingMessage while the caller streams; the 0.3 names
 * for 0.3 peers, through the SDK's compatibility layer) with the stored
 * headers, under a 60 s limit (A2A_TIMEOUT_MS) and the turn's abort signal,
 * and every URL it fetches passes the URL guard again. The reply's text parts
 * and artifacts come back as one citable passage; any failure is an error
 * result, never a failed turn.
 */

export { DEFAULT_A2A_TIMEOUT_MS };
const MAX_REPLY_CHARS = 32_000;

const timeoutOf = (env: Env) => config(env).a2aTimeoutMs;

/** The registration, if `origin` may use it: same organization, environment, tenant and knowledge base. */
async function usable(origin: DelegationOrigin, id: string): Promise<A2aAgent | null> {
  const row = await origin.db
    .select()
    .from(a2aAgents)
    .where(and(eq(a2aAgents.id, id), eq(a2aAgents.knowledgeBaseId, origin.knowledgeBaseId), eq(a2aAgents.tenantId, origin.tenantId)))
    .get();
  if (!row || row.organizationId !== origin.organizationId || row.environmentId !== origin.environmentId) return null;
  return row;
}

/**
 * A fetch for the SDK's transport: every URL checked by the guard (the card
 * may name any host), the stored headers added, redirects refused (a JSON-RPC
 * POST has no business being redirected, and a redirect could point inward).
 */
function guardedRpcFetch(env: Env, headers: Record<string, string>, signal: AbortSignal): typeof fetch {
  const policy = guardPolicy(env);
  return async (input, init) => {
    const req = new Request(input as RequestInfo, init);
    const url = new URL(req.url);
    assertUrlAllowed(url, policy);
    await assertResolvesPublic(url, policy, signal);
    const h = new Headers(req.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    const res = await fetch(req.url, { method: req.method, headers: h, body: req.body, redirect: "manual", signal });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw new Error(`the agent answered a redirect (HTTP ${res.status}), which is not followed`);
    }
    return res;
  };
}

function partText(p: Part): string {
  const c = p.content;
  if (!c) return "";
  if (c.$case === "text") return c.value;
  if (c.$case === "data") return JSON.stringify(c.value);
  if (c.$case === "url") return `${p.filename || "File"}: ${c.value}`;
  return p.filename ? `[file ${p.filename}]` : "";
}
/** Consecutive text parts are pieces of one text (a streamed reply splits words): joined as they are; other parts on lines of their own. */
function partsText(parts: Part[] | undefined): string {
  let out = "";
  let prevText = false;
  for (const p of parts ?? []) {
    const t = partText(p);
    if (!t) continue;
    const isText = p.content?.$case === "text";
    out += out && !(isText && prevText) ? `\n${t}` : t;
    prevText = isText;
  }
  return out;
}

/** Collects the reply of a task or a stream: status message text and artifacts (appends honoured). */
class Reply {
  messages: string[] = [];
  artifacts = new Map<string, { name: string; text: string }>();
  state: number | null = null;
  statusText = "";
  taskId: string | null = null;

  addMessage(m: Message) {
    const t = partsText(m.parts);
    if (t) this.messages.push(t);
  }
  addTask(t: Task) {
    this.taskId = t.id;
    this.state = t.status?.state ?? null;
    if (t.status?.message) this.statusText = partsText(t.status.message.parts);
    for (const a of t.artifacts ?? []) this.artifacts.set(a.artifactId, { name: a.name, text: partsText(a.parts) });
  }
  addEvent(ev: StreamResponse) {
    const p = ev.payload;
    if (!p) return;
    if (p.$case === "message") this.addMessage(p.value);
    else if (p.$case === "task") this.addTask(p.value);
    else if (p.$case === "statusUpdate") {
      this.state = p.value.status?.state ?? this.state;
      const t = partsText(p.value.status?.message?.parts);
      if (t) this.statusText = t;
    } else if (p.$case === "artifactUpdate" && p.value.artifact) {
      const a = p.value.artifact;
      const prev = this.artifacts.get(a.artifactId);
      const text = partsText(a.parts);
      this.artifacts.set(a.artifactId, { name: a.name || prev?.name || "", text: p.value.append && prev ? prev.text + text : text });
    }
  }
  text(): string {
    const arts = [...this.artifacts.values()].map((a) => a.text).filter(Boolean);
    const parts = [...this.messages, ...arts];
    // A task's final status message often repeats an artifact; keep it only when it adds something.
    if (this.statusText && !parts.some((p) => p.includes(this.statusText))) parts.unshift(this.statusText);
    return parts.join("\n\n").slice(0, MAX_REPLY_CHARS);
  }
}

// TaskState values (ts-proto enum of @a2a-js/sdk), kept here to avoid loading the SDK for constants.
const FAILED = 4;
const CANCELED = 5;
const INPUT_REQUIRED = 6;
const REJECTED = 7;
const AUTH_REQUIRED = 8;
const IN_FLIGHT = new Set([0, 1, 2]);

type Registration = NonNullable<Awaited<ReturnType<typeof usable>>>;
type Card = NonNullable<Registration["card"]>;

/** An SDK client for the registration's card: JSON-RPC (0.3 peers through the compatibility layer), every request through the URL guard with the registration's headers. */
async function clientFor(env: DelegationOrigin["env"], row: Registration, card: Card, signal: AbortSignal) {
  const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } = await import("@a2a-js/sdk/client");
  const fetchImpl = guardedRpcFetch(env, await headersOf(env, row), signal);
  const resolver = new DefaultAgentCardResolver({ legacyCompat: { enabled: true }, fetchImpl });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver: resolver,
    }),
  );
  return factory.createFromAgentCard(card.raw as never);
}

/** The question as a SendMessage request; the registration's metadata goes along when it is a JSON object. */
async function requestFor(env: DelegationOrigin["env"], row: Registration, question: string) {
  const { Role } = await import("@a2a-js/sdk");
  const meta = await metadataOf(env, row);
  let metadata: Record<string, unknown> | undefined;
  try {
    const parsed = meta ? JSON.parse(meta) : undefined;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) metadata = parsed;
  } catch {
    /* metadata that is not a JSON object is kept for the owner, not sent */
  }
  const message: Message = {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: question }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: "", message, configuration: undefined, metadata };
}

/** Sends the request (streamed when both sides stream) and follows a task still in flight until it ends. */
async function exchange(
  client: Awaited<ReturnType<typeof clientFor>>,
  request: Awaited<ReturnType<typeof requestFor>>,
  streams: boolean,
  signal: AbortSignal,
): Promise<Reply> {
  const reply = new Reply();
  if (streams) {
    for await (const ev of client.sendMessageStream(request, { signal })) reply.addEvent(ev);
    return reply;
  }
  const res = await client.sendMessage(request, { signal });
  if ("messageId" in res) reply.addMessage(res as Message);
  else reply.addTask(res as Task);
  while (reply.taskId && reply.state !== null && IN_FLIGHT.has(reply.state)) {
    await new Promise((r) => setTimeout(r, 500));
    if (signal.aborted) throw signal.reason;
    reply.addTask(await client.getTask({ tenant: "", id: reply.taskId }, { signal }));
  }
  return reply;
}

/** What the reply means for the caller: the answer, or why there is none (`record`: kept as the registration's last error). */
function outcomeOf(name: string, reply: Reply): { text: string; error?: string; record: boolean } {
  const text = reply.text();
  const state = reply.state;
  if (state === FAILED || state === REJECTED || state === CANCELED) {
    const why = state === FAILED ? "failed" : state === REJECTED ? "rejected the task" : "cancelled the task";
    return { text, error: `The agent "${name}" ${why}${text ? `: ${text.slice(0, 2000)}` : "."}`, record: true };
  }
  if (state === AUTH_REQUIRED) return { text, error: `The agent "${name}" needs authentication (check the registration's headers).`, record: true };
  if (!text) return { text, error: `The agent "${name}" answered without any text.`, record: false };
  // One question, one answer: a task that asks for more input is answered with what it said so far.
  return { text: state === INPUT_REQUIRED ? `${text}\n\n(The agent asks for more input.)` : text, record: true };
}

export const a2aDelegates: DelegateResolver = {
  prefix: "a2a_",
  async resolve(origin, id) {
    const row = await usable(origin, id);
    return row ? { id: row.id, name: row.name, description: row.description ?? row.card?.description ?? null } : null;
  },
  async delegate(origin, id, call): Promise<DelegationResult> {
    const fail = (text: string, name = id, url: string | null = null): DelegationResult => ({
      passage: { document_id: null, filename: `Agent: ${name}`, chunk_id: null, text, score: 0, page: null, url },
      delegatedAgentId: id,
      isError: true,
      text,
    });
    if (origin.depth >= 1) return fail("A delegate cannot delegate further (one hop).");
    const row = await usable(origin, id);
    if (!row || !row.card) return fail("This external agent is not registered for this knowledge base (any more).");
    const limitMs = timeoutOf(origin.env);
    const timeout = AbortSignal.timeout(limitMs);
    const signal = AbortSignal.any([call.signal, timeout]);
    const agentUrl = row.card.url;
    try {
      const client = await clientFor(origin.env, row, row.card, signal);
      const streams = call.streaming && (row.card.raw as { capabilities?: { streaming?: boolean } } | null)?.capabilities?.streaming === true;
      const reply = await exchange(client, await requestFor(origin.env, row, call.question), streams, signal);
      const outcome = outcomeOf(row.name, reply);
      if (outcome.record) await recordCallOutcome(origin.db, row.id, outcome.error ?? null);
      if (outcome.error) return fail(outcome.error, row.name, agentUrl);
      return {
        passage: { document_id: null, filename: `Agent: ${row.name}`, chunk_id: null, text: outcome.text, score: 1, page: null, url: agentUrl },
        delegatedAgentId: row.id,
        isError: false,
      };
    } catch (e) {
      const seconds = Math.round(limitMs / 1000);
      const msg = timeout.aborted
        ? `The agent "${row.name}" did not answer within ${seconds} s.`
        : call.signal.aborted
          ? `The call to the agent "${row.name}" was cancelled.`
          : `The agent "${row.name}" could not be reached: ${String((e as Error)?.message ?? e).slice(0, 500)}`;
      if (!call.signal.aborted || timeout.aborted) await recordCallOutcome(origin.db, row.id, msg).catch(() => {});
      return fail(msg, row.name, agentUrl);
    }
  },
};

