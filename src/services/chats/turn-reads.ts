import { and, eq, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { primeMembership } from "../../auth/authorize";
import { verifiedCaller } from "../../auth/caller-check";
import { loadAuthorized } from "../../auth/load";
import type { Database } from "../../db/client";
import { chats, documents, knowledgeBases, organizationMembers, organizations, tenantMemorySettings, tenants, type Chat, type Organization, type Role } from "../../db/schema";
import { notFound } from "../../lib/errors";
import type { ServiceContext } from "../../contracts/context";
import { compiler, p } from "../../db/compiled";
import { assertCreditsLeft } from "../billing/metering";
import { tabularDocumentWhere } from "../tables/service";
import { DEFAULT_MEMORY_SETTINGS, type MemorySettings } from "../memory/settings";
import { assertSubjectParam, ownsChat } from "./access";
import { chatScope } from "./chats";

/** readTurnState's statements, built once (src/db/compiled.ts): `id` is the chat's, `userId` a signed-in caller's. */
type TurnValues = { id: string; userId: string };
const compile = compiler<TurnValues>();
const messagesOfChat = sql`FROM messages WHERE chat_id = ${chats.id}`;
/**
 * A joined column under a name of its own: D1 returns a batch's rows keyed by column name, so two columns of the
 * same name would collapse into one (and every column after them would be misread).
 */
const joined = <T>(column: SQL | AnyColumn, name: string) => sql<T>`${column}`.as(`turn_${name}`);
const turnQueries = {
  // The chat with what is joined to it: no column of the joined tables is read under its own name.
  chat: compile((db) =>
    db
      .select({
        chat: chats,
        creditsPool: joined<number | null>(tenants.creditsPool, "credits_pool"),
        creditsUsed: joined<number | null>(tenants.creditsUsed, "credits_used"),
        // The tenant's memory settings: the turn's memory needs no query of its own (src/services/memory/settings.ts).
        memoryMode: joined<MemorySettings["mode"] | null>(tenantMemorySettings.mode, "memory_mode"),
        memoryRetention: joined<MemorySettings["retention"] | null>(tenantMemorySettings.retention, "memory_retention"),
        // A signed-in user's membership in the chat's organization: authorize needs no query of its own.
        memberRole: joined<Role | null>(organizationMembers.role, "member_role"),
        memberOrgStatus: joined<Organization["status"] | null>(organizations.status, "member_org_status"),
        maxSeq: joined<number>(sql`(SELECT COALESCE(MAX(seq), 0) ${messagesOfChat})`, "max_seq"),
        count: joined<number>(sql`(SELECT COUNT(*) ${messagesOfChat})`, "count"),
        tabular: joined<number>(sql`EXISTS (SELECT 1 FROM documents WHERE ${tabularDocumentWhere(sql`${chats.knowledgeBaseId}`)})`, "tabular"),
      })
      .from(chats)
      .leftJoin(tenants, eq(tenants.id, chats.tenantId))
      .leftJoin(tenantMemorySettings, eq(tenantMemorySettings.tenantId, chats.tenantId))
      .leftJoin(organizationMembers, and(eq(organizationMembers.organizationId, chats.organizationId), eq(organizationMembers.userId, p("userId"))))
      .leftJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
      .where(eq(chats.id, p("id")))
      .limit(1),
  ),
  kb: compile((db) => db.select().from(knowledgeBases).where(eq(knowledgeBases.id, sql`(SELECT knowledge_base_id FROM chats WHERE id = ${p("id")})`))),
};

/**
 * Everything a new turn on an existing chat reads before it starts, in ONE D1 round trip of two statements
 * (README "Latency"): the chat with, joined to it, its tenant's credits, where its transcript ends (the last
 * `seq` and the number of messages), whether its knowledge base has a data file (the toolbox's `sql__query`), the
 * tenant's memory settings and, for a signed-in user, their membership in the chat's organization (what
 * authorize would read); and the chat's knowledge base, found through the chat inside its statement. Nothing
 * waits for the chat first. The transcript's end travels with the turn to the chat's Durable Object, which then neither reads the
 * chat again nor waits for the user message's write before its first event (src/durable/chat-session.ts).
 */
export async function readTurnState(c: ServiceContext, chatId: string, externalSubjectId: string | undefined | null) {
  assertSubjectParam(c.caller, externalSubjectId);
  const initial = c.caller;
  const values: TurnValues = { id: chatId.toLowerCase(), userId: initial.type === "user" ? initial.user.id : "" };
  const db = c.db;
  // The caller's re-read (a cached key or session, src/auth/caller-cache.ts) runs alongside the batch.
  const [[[row], [kb]], verified] = await Promise.all([db.batch([turnQueries.chat(db, values), turnQueries.kb(db, values)]), verifiedCaller(c)]);
  const caller = verified!;
  if (caller.type === "user" && row) {
    const member = row.memberRole !== null && row.memberOrgStatus !== null ? { role: row.memberRole, status: row.memberOrgStatus } : null;
    primeMembership(caller, row.chat.organizationId, member);
  }
  const { row: chat } = await loadAuthorized(c, "query:rag", row?.chat, (ch) => chatScope(ch)!, { what: "Chat" });
  if (!ownsChat(caller, chat, externalSubjectId)) throw notFound("Chat");
  if (!kb) throw notFound("Knowledge base");
  const read = row!; // the chat exists: loadAuthorized refused otherwise
  // Reported where prepareTurn reports the credit check (after the turn's own 400s).
  let spend: Promise<void>;
  try {
    assertCreditsLeft(read.creditsPool === null || read.creditsUsed === null ? undefined : { pool: read.creditsPool, used: read.creditsUsed });
    spend = Promise.resolve();
  } catch (e) {
    spend = Promise.reject(e);
    spend.catch(() => {});
  }
  const transcript = { maxSeq: Number(read.maxSeq ?? 0), count: Number(read.count ?? 0) };
  const memorySettings: MemorySettings = read.memoryMode && read.memoryRetention ? { mode: read.memoryMode, retention: read.memoryRetention } : { ...DEFAULT_MEMORY_SETTINGS };
  return { chat, kb, spend, transcript, tabular: Number(read.tabular) > 0, memorySettings };
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
