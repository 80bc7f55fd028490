import { and, eq, sql } from "drizzle-orm";
import { primeMembership } from "../../auth/authorize";
import { verifiedCaller } from "../../auth/caller-check";
import { loadAuthorized } from "../../auth/load";
import type { Database } from "../../db/client";
import { chats, documents, knowledgeBases, messages, organizationMembers, organizations, tenantMemorySettings, tenants, type Chat } from "../../db/schema";
import { notFound } from "../../lib/errors";
import type { ServiceContext } from "../../contracts/context";
import { compiler, p } from "../../db/compiled";
import { assertCreditsLeft } from "../billing/metering";
import { tabularDocumentWhere } from "../tables/service";
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from "../memory/settings";
import { assertSubjectParam, ownsChat } from "./access";
import { chatScope } from "./chats";

/** A chat's column, read inside a statement (nothing waits for the chat first). */
const ofChat = (column: "knowledge_base_id" | "tenant_id" | "organization_id") => sql`(SELECT ${sql.raw(column)} FROM chats WHERE id = ${p("id")})`;

/** readTurnState's statements, built once (src/db/compiled.ts): `id` is the chat's, `userId` a signed-in caller's. */
type TurnValues = { id: string; userId: string };
const compile = compiler<TurnValues>();
const turnQueries = {
  chat: compile((db) => db.select().from(chats).where(eq(chats.id, p("id")))),
  kb: compile((db) => db.select().from(knowledgeBases).where(eq(knowledgeBases.id, ofChat("knowledge_base_id")))),
  credits: compile((db) => db.select({ pool: tenants.creditsPool, used: tenants.creditsUsed }).from(tenants).where(eq(tenants.id, ofChat("tenant_id")))),
  transcript: compile((db) =>
    db.select({ maxSeq: sql<number>`COALESCE(MAX(${messages.seq}), 0)`, count: sql<number>`COUNT(*)` }).from(messages).where(eq(messages.chatId, p("id"))),
  ),
  tabular: compile((db) => db.select({ n: sql<number>`1` }).from(documents).where(tabularDocumentWhere(ofChat("knowledge_base_id"))).limit(1)),
  // A signed-in user's membership in the chat's organization: authorize needs no query of its own.
  member: compile((db) =>
    db
      .select({ role: organizationMembers.role, status: organizations.status })
      .from(organizationMembers)
      .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
      .where(and(eq(organizationMembers.organizationId, ofChat("organization_id")), eq(organizationMembers.userId, p("userId")))),
  ),
  // The tenant's memory settings: the turn's memory needs no query of its own (src/services/memory/settings.ts).
  memory: compile((db) =>
    db.select({ mode: tenantMemorySettings.mode, retention: tenantMemorySettings.retention }).from(tenantMemorySettings).where(eq(tenantMemorySettings.tenantId, ofChat("tenant_id"))),
  ),
};

/**
 * Everything a new turn on an existing chat reads before it starts, in ONE D1 round trip (README "Latency"): the
 * chat, its knowledge base, its tenant's credits, where its transcript ends (the last `seq` and the number of
 * messages), whether the knowledge base has a data file (the toolbox's `sql__query`), the tenant's memory settings and, for a signed-in user,
 * their membership in the chat's organization (what authorize would read). The knowledge base and the tenant are found through the chat inside the statements, so nothing waits
 * for the chat first. The transcript's end travels with the turn to the chat's Durable Object, which then neither
 * reads the chat again nor waits for the user message's write before its first event (src/durable/chat-session.ts).
 */
export async function readTurnState(c: ServiceContext, chatId: string, externalSubjectId: string | undefined | null) {
  assertSubjectParam(c.caller, externalSubjectId);
  const db = c.db;
  const initial = c.caller;
  const values: TurnValues = { id: chatId.toLowerCase(), userId: initial.type === "user" ? initial.user.id : "" };
  const q = turnQueries;
  // The caller's re-read (a cached key or session, src/auth/caller-cache.ts) runs alongside the batch.
  const [[chatRows, kbRows, tenantRows, transcriptRows, tabularRows, memberRows, memoryRows], verified] = await Promise.all([
    db.batch([q.chat(db, values), q.kb(db, values), q.credits(db, values), q.transcript(db, values), q.tabular(db, values), q.member(db, values), q.memory(db, values)]),
    verifiedCaller(c),
  ]);
  const caller = verified!;
  if (caller.type === "user" && chatRows[0]) primeMembership(caller, chatRows[0].organizationId, memberRows[0] ?? null);
  const { row: chat } = await loadAuthorized(c, "query:rag", chatRows[0], (ch) => chatScope(ch)!, { what: "Chat" });
  if (!ownsChat(caller, chat, externalSubjectId)) throw notFound("Chat");
  const kb = kbRows[0];
  if (!kb) throw notFound("Knowledge base");
  // Reported where prepareTurn reports the credit check (after the turn's own 400s).
  let spend: Promise<void>;
  try {
    assertCreditsLeft(tenantRows[0]);
    spend = Promise.resolve();
  } catch (e) {
    spend = Promise.reject(e);
    spend.catch(() => {});
  }
  const transcript = { maxSeq: Number(transcriptRows[0]?.maxSeq ?? 0), count: Number(transcriptRows[0]?.count ?? 0) };
  const memorySettings: MemorySettings = memoryRows[0] ?? { ...DEFAULT_MEMORY_SETTINGS };
  return { chat, kb, spend, transcript, tabular: tabularRows.length > 0, memorySettings };
}

/** A create's reads (readCreateState), built once: the new chat's id, and the tenant and knowledge base it names. */
type CreateValues = { chatId: string; tenantId: string; kbId: string };
const compileCreate = compiler<CreateValues>();
const createQueries = {
  existing: compileCreate((db) => db.select().from(chats).where(eq(chats.id, p("chatId")))),
  credits: compileCreate((db) => db.select({ pool: tenants.creditsPool, used: tenants.creditsUsed }).from(tenants).where(eq(tenants.id, p("tenantId")))),
  tabular: compileCreate((db) => db.select({ n: sql<number>`1` }).from(documents).where(tabularDocumentWhere(sql`${p("kbId")}`)).limit(1)),
  memory: compileCreate((db) =>
    db.select({ mode: tenantMemorySettings.mode, retention: tenantMemorySettings.retention }).from(tenantMemorySettings).where(eq(tenantMemorySettings.tenantId, p("tenantId"))),
  ),
};

/**
 * What `POST /chats` with a first message reads alongside the knowledge base's authorization, in ONE D1 round
 * trip (README "Latency"): a chat already under the new id (a retried create), the named tenant's credits and
 * memory settings, and whether the named knowledge base has a data file. Each is used only once the knowledge
 * base is authorized, and only for the tenant and knowledge base it turned out to be (src/services/chats/create.ts).
 * The turn then reads none of them again.
 */
export async function readCreateState(db: Database, values: CreateValues) {
  const q = createQueries;
  const [existing, credits, tabular, memory] = await db.batch([q.existing(db, values), q.credits(db, values), q.tabular(db, values), q.memory(db, values)]);
  return {
    existing: existing[0] as Chat | undefined,
    credits: credits[0],
    tabular: tabular.length > 0,
    memorySettings: (memory[0] ?? { ...DEFAULT_MEMORY_SETTINGS }) as MemorySettings,
  };
}
