// One file per area; later capabilities add theirs here.
export * from "./identity";
export * from "./organizations";
export * from "./knowledge-bases";
export * from "./usage";
export * from "./skills";
export * from "./artifacts";
export * from "./documents";
export * from "./chats";
export * from "./mcp";
export * from "./agents";
export * from "./a2a";
export * from "./memory";
export * from "./embed";
export * from "./connectors";
export * from "./oauth-flows";
export * from "./mcp-oauth";
