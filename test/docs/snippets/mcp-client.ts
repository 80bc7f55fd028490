// test/docs/snippets/mcp-client.ts
// A knowledge base as an MCP server, from code (@modelcontextprotocol/sdk), with the API, KEY and KB_ID of the shell session:
//   npx node test/docs/snippets/mcp-client.ts "refund policy"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { API, KEY, KB_ID } = process.env;
const client = new Client({ name: "my-app", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(`${API}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));

const { tools } = await client.listTools();
console.log("tools:", tools.map((t) => t.name).join(", "));
const topic = process.argv[2] ?? "refund policy";
const hits = await client.callTool({ name: "search", arguments: { query: topic, knowledge_base_id: KB_ID } });
const answer = await client.callTool({ name: "ask", arguments: { question: `What does the ${topic} say?`, knowledge_base_id: KB_ID } });
for (const result of [hits, answer]) {
  for (const c of result.content as { type: string; text?: string }[]) if (c.type === "text") console.log(c.text);
}
await client.close();
