import { createRouter } from "../../lib/router";
import { skillCatalogRoutes } from "./catalog";
import { skillCrudRoutes } from "./skills";

/** Skills and the skill catalog. The catalog first, so that "catalog" is never taken for a skill id. */
export const skillRoutes = createRouter().route("/", skillCatalogRoutes).route("/", skillCrudRoutes);
