import type { Database } from "../../db/client";
import type { McpOAuthGrant } from "../../db/schema";
import type { Env } from "../../env";
import { registerHousekeeping } from "../housekeeping";
import { deleteGrants, grantsOfFormerMembers, purgeLapsedGrants } from "./grants";
import { oauthHelpers } from "./provider";

/**
 * The end of OAuth grants: revocation (the API, and members who left) and the scheduled purge.
 * Deleting the row is what stops a token at once (src/services/mcp-oauth/grants.ts); the provider's
 * grant and tokens in OAUTH_KV are removed right after, so a refresh fails too.
 */

/** Revokes grants: rows first, then the provider's records (a failure there is logged: the rows already refuse). */
export async function revokeGrants(db: Database, env: Env, grants: McpOAuthGrant[]): Promise<void> {
  await deleteGrants(db, grants.map((g) => g.id));
  const helpers = oauthHelpers(env);
  await Promise.all(
    grants
      .filter((g) => g.providerGrantId)
      .map((g) => helpers.revokeGrant(g.providerGrantId!, g.userId).catch((e) => console.error(`OAuth grant ${g.id}: provider revocation failed`, e))),
  );
}

/** Where the provider's purge resumes (its own keys are `grant:` and `token:` prefixed). */
const PURGE_CURSOR_KEY = "kb-chat:purge-cursor";
/** Keys checked per phase and run; each costs KV operations, and the cron run shares the subrequest budget. */
const PURGE_BATCH = 50;
const FORMER_MEMBER_BATCH = 20;

/** The cron's OAuth housekeeping: the provider's expired data, lapsed rows, and grants of members who left. */
export async function purgeMcpOAuth(db: Database, env: Env, at: Date) {
  const helpers = oauthHelpers(env);
  const cursor = (await env.OAUTH_KV.get(PURGE_CURSOR_KEY)) ?? undefined;
  const result = await helpers.purgeExpiredData({ batchSize: PURGE_BATCH, cursor });
  if (result.cursor) await env.OAUTH_KV.put(PURGE_CURSOR_KEY, result.cursor);
  else if (cursor) await env.OAUTH_KV.delete(PURGE_CURSOR_KEY);
  await purgeLapsedGrants(db, at);
  await revokeGrants(db, env, await grantsOfFormerMembers(db, FORMER_MEMBER_BATCH));
  return result;
}

registerHousekeeping("mcp oauth: purge expired grants and tokens", async (db, env, at) => {
  await purgeMcpOAuth(db, env, at);
});
