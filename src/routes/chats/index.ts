import { createRouter } from "../../lib/router";
import { chatCrudRoutes } from "./crud";
import { chatQueryRoutes } from "./queries";
import { sharedChatRoutes } from "./shared";
import { chatTurnRoutes } from "./turns";
import { chatUiStreamRoutes } from "./ui-stream";

/** Chats: models, CRUD, turns, fast queries and shared transcripts. /chats/models before /chats/{id}. */
export const chatRoutes = createRouter()
  .route("/", chatCrudRoutes)
  .route("/", chatQueryRoutes)
  .route("/", chatTurnRoutes)
  .route("/", chatUiStreamRoutes)
  .route("/", sharedChatRoutes);
