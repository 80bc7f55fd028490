import { createRouter } from "../../lib/router";
import { artifactCrudRoutes } from "./crud";
import { artifactLifecycleRoutes } from "./lifecycle";

/** Artifacts of knowledge bases: create, read, edit, archive, revisions, publishing. */
export const artifactRoutes = createRouter().route("/", artifactCrudRoutes).route("/", artifactLifecycleRoutes);
