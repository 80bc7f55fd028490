import { createRouter } from "../../lib/router";
import { a2aRegistrationRoutes } from "./registrations";
import { a2aServerRoutes } from "./server";

/** External (A2A) agents: registrations under knowledge bases, and our agents' A2A card and JSON-RPC endpoint. */
export const a2aRoutes = createRouter().route("/", a2aRegistrationRoutes).route("/", a2aServerRoutes);
