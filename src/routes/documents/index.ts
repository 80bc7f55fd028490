import { createRouter } from "../../lib/router";
import { manageRoutes } from "./manage";
import { readRoutes } from "./read";
import { uploadRoutes } from "./upload";

/** Documents (specification, "Documents"). Read routes first: /documents/status before /documents/{id}. */
export const documentRoutes = createRouter()
  .route("/", uploadRoutes)
  .route("/", readRoutes)
  .route("/", manageRoutes);
