import { env } from "cloudflare:test";
import { and, eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { compiler, p } from "../../src/db/compiled";
import { rideAlong } from "../../src/db/rider";
import { openSessionDb } from "../../src/db/session";
import { organizationMembers, organizations } from "../../src/db/schema";
import { createOrg } from "../helpers";

/**
 * A compiled query (src/db/compiled.ts) is built once and filled per call: it must answer exactly what the same
 * drizzle query answers (rows mapped the same way, joins included), for each call's own values, batched with
 * other queries and carrying a rider, and awaited alone.
 */
afterEach(() => vi.restoreAllMocks());

type Values = { org: string; user: string };
const compile = compiler<Values>();
const membership = compile((db) =>
  db
    .select({ role: organizationMembers.role, status: organizations.status, org: { id: organizations.id, name: organizations.name } })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .where(and(eq(organizationMembers.organizationId, p("org")), eq(organizationMembers.userId, p("user")))),
);
const built = (db: ReturnType<typeof openSessionDb>["db"], v: Values) =>
  db
    .select({ role: organizationMembers.role, status: organizations.status, org: { id: organizations.id, name: organizations.name } })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .where(and(eq(organizationMembers.organizationId, v.org), eq(organizationMembers.userId, v.user)));

describe("a compiled query", () => {
  it("answers what the query answers, for each call's own values, in a batch and alone", async () => {
    const a = await createOrg();
    const b = await createOrg();
    const { db } = openSessionDb({ DB: env.DB });
    const va = { org: a.id, user: a.owner.id };
    const vb = { org: b.id, user: b.owner.id };
    const [ca, cb, cross, ba, bb] = await db.batch([membership(db, va), membership(db, vb), membership(db, { org: a.id, user: b.owner.id }), built(db, va), built(db, vb)]);
    expect(ca).toEqual(ba);
    expect(cb).toEqual(bb);
    expect(ca).toHaveLength(1);
    expect(ca[0].org.id).toBe(a.id); // nested selection mapped as drizzle maps it
    expect(cb[0].org.id).toBe(b.id);
    expect(cross).toEqual([]);
    expect(await membership(db, vb)).toEqual(bb); // awaited alone: a batch of one
  });

  it("carries a rider in a batch like the query would (one D1 call)", async () => {
    const a = await createOrg();
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { db } = openSessionDb({ DB: env.DB, SIMULATED_HOPS_TRACE: "1" });
    const riding = rideAlong(db, db.select({ n: sql<number>`7` }).from(sql`(SELECT 1)`));
    const [rows] = await db.batch([membership(db, { org: a.id, user: a.owner.id })]);
    expect(rows).toHaveLength(1);
    expect(await riding.result).toEqual([{ n: 7 }]);
    const calls = log.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith("[hop] d1 "));
    expect(calls.map((l) => l.split(" @ ")[0])).toEqual(["[hop] d1 batch of 2"]);
  });
});
