import { Hono } from "hono";
import type { AppEnv } from "../../types";
import { chatImage, sharePage } from "../chats/shared";
import { publishedPageRoutes } from "./published";

/**
 * The HTML pages outside the API, served by the root app: published artifacts
 * (PUBLIC_BASE_URL/p/:slug), share URLs of chats (/share/:chatId, a read-only
 * transcript) and the images of chat messages (capability URLs).
 */
export const pageRoutes = new Hono<AppEnv>()
  .route("/", publishedPageRoutes)
  .get("/share/:chatId", sharePage)
  .get("/chat-images/:chatId/:file", chatImage);
