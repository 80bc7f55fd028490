/**
 * THE list of API paths (relative to /api/v1) that work without credentials.
 * Every other path answers 401 to an anonymous caller, in the authentication
 * middleware, before validation or any lookup. Public handlers read the caller
 * with `optionalCaller(c)`.
 */
export const PUBLIC_PATHS: readonly RegExp[] = [
  /^\/auth\/(signup|login)$/,
  // Shared transcripts: public chats need no credentials; `org` ones check the session themselves.
  /^\/shared-chats\/[^/]+$/,
  // OAuth callbacks of browsers: they validate a signed, single-use state instead.
  /^\/mcp\/servers\/oauth\/callback$/,
  /^\/connectors\/auth\/callback$/,
  // Connect flows opened in a browser (src/services/oauth-flows.ts): the unguessable, single-use id is the capability.
  /^\/oauth-flows\/[^/]+$/,
  // A2A agent cards are discovery documents: public, as the protocol expects (the card names the auth scheme).
  /^\/agents\/[^/]+\/a2a\/\.well-known\/agent-card\.json$/,
];

export function isPublicApiPath(pathname: string): boolean {
  const path = pathname.replace(/^\/api\/v1/, "");
  return PUBLIC_PATHS.some((re) => re.test(path));
}
