import { createRoute } from "@hono/zod-openapi";
import { requireCaller } from "../../auth/authorize";
import { errorResponses, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { publicDocument } from "../../services/documents/documents";
import { ingestUrl } from "../../services/web/ingest-url";
import { discoverSite } from "../../services/web/site";
import { creatorOf, knowledgeBaseForWrite } from "./upload";
import { DocumentSchema, SiteUrlsSchema, UploadSiteBody, UploadUrlBody } from "./schemas";

const tags = ["Documents"];
const fetchErrors = {
  413: { description: "The page is larger than 5 MB" },
  415: { description: "The URL serves a type that is not accepted" },
  422: { description: "fetch_failed: unreachable, timed out (15 s), or not 2xx" },
};

const uploadUrl = createRoute({
  method: "post",
  path: "/documents/upload-url",
  tags,
  operationId: "ingestWebPage",
  summary: "Fetch a web page, keep its readable content as Markdown and queue it",
  description:
    "https:// is added when the scheme is omitted. The page is fetched during the request (15 s, 5 MB); private, " +
    "loopback, link-local and metadata addresses are refused, also after redirects (400 url_not_allowed). The page " +
    "title becomes the filename; `source_url` is the final URL.",
  security: userOrKey,
  request: { body: jsonBody(UploadUrlBody) },
  responses: { 201: jsonContent(DocumentSchema, "The document, queued"), ...errorResponses, ...fetchErrors },
});

const uploadSite = createRoute({
  method: "post",
  path: "/documents/upload-url-site",
  tags,
  operationId: "discoverSitePages",
  summary: "Discover up to 25 page URLs of a site (robots.txt and sitemaps, then the root page's links)",
  description: "Returns URLs only: ingest the chosen pages with POST /documents/upload-url. Same host unless include_subdomains.",
  security: userOrKey,
  request: { body: jsonBody(UploadSiteBody) },
  responses: { 200: jsonContent(SiteUrlsSchema, "Discovered URLs"), ...errorResponses, ...fetchErrors },
});

export const webRoutes = createRouter()
  .openapi(uploadUrl, async (c) => {
    const caller = requireCaller(c);
    const body = c.req.valid("json");
    const kb = await knowledgeBaseForWrite(c, body.kb_id, body.tenant_id);
    const doc = await ingestUrl(c.env, c.get("db"), kb, body.url, creatorOf(caller));
    return c.json(publicDocument(doc), 201);
  })
  .openapi(uploadSite, async (c) => {
    const body = c.req.valid("json");
    // The knowledge base is named for access validation: the caller must be able to add documents to it.
    await knowledgeBaseForWrite(c, body.kb_id, body.tenant_id);
    const urls = await discoverSite(c.env, body.url, body.include_subdomains);
    return c.json({ urls }, 200);
  });
