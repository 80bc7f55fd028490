import { createRouter } from "../../lib/router";
import { manageRoutes } from "./manage";
import { readRoutes } from "./read";
import { uploadRoutes } from "./upload";
import { webRoutes } from "./web";

/** Documents (specification, "Documents"). Read routes first: /documents/status before /documents/{id}. */
export const documentRoutes = createRouter()
  .route("/", uploadRoutes)
  .route("/", webRoutes)
  .route("/", readRoutes)
  .route("/", manageRoutes);
