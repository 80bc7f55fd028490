import { callerId } from "../../contracts/caller";
import { ctxOf } from "../context";
import { extraErrors, jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { publicDocument } from "../../services/documents/documents";
import { ingestUrl } from "../../services/web/ingest-url";
import { discoverSite } from "../../services/web/site";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { DocumentSchema, SiteUrlsSchema, UploadSiteBody, UploadUrlBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Documents"]);
const fetchErrors = extraErrors(413, 415, 422);

export const webRoutes = createRouter();

const uploadUrl = route("post", "/documents/upload-url", "documents:write", {
  operationId: "ingestWebPage", summary: "Fetch a web page, keep its readable content as Markdown and queue it",
  description:
    "https:// is added when the scheme is omitted. The page is fetched during the request (15 s, 5 MB); private, " +
    "loopback, link-local and metadata addresses are refused, also after redirects (400 url_not_allowed). The page " +
    "title becomes the filename; `source_url` is the final URL.",
  request: { body: jsonBody(UploadUrlBody) },
  responses: { 201: jsonContent(DocumentSchema, "The document, queued"), ...fetchErrors },
});
webRoutes.openapi(uploadUrl, async (c) => {
  const body = c.req.valid("json");
  const kb = await knowledgeBaseFor(ctxOf(c), body.kb_id, "documents:write", { addressedBy: "param", tenantId: body.tenant_id });
  const doc = await ingestUrl(c.env, c.get("db"), kb, body.url, callerId(c.get("caller")));
  return c.json(publicDocument(doc), 201);
});

const uploadSite = route("post", "/documents/upload-url-site", "documents:write", {
  operationId: "discoverSitePages",
  summary: "Discover up to 25 page URLs of a site (robots.txt and sitemaps, then the root page's links)",
  description: "Returns URLs only: ingest the chosen pages with POST /documents/upload-url. Same host unless include_subdomains.",
  request: { body: jsonBody(UploadSiteBody) },
  responses: { 200: jsonContent(SiteUrlsSchema, "Discovered URLs"), ...fetchErrors },
});
webRoutes.openapi(uploadSite, async (c) => {
  const body = c.req.valid("json");
  // The knowledge base is named for access validation: the caller must be able to add documents to it.
  await knowledgeBaseFor(ctxOf(c), body.kb_id, "documents:write", { addressedBy: "param", tenantId: body.tenant_id });
  return c.json({ urls: await discoverSite(c.env, body.url, body.include_subdomains) }, 200);
});
