// test/docs/snippets/a2a-client.ts
// One of our agents from an A2A client (@a2a-js/sdk), with the API, KEY and AGENT_ID of the shell session:
//   npx node test/docs/snippets/a2a-client.ts "How long do refunds take?"
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";

const { API, KEY, AGENT_ID } = process.env;
// Every request (the card and the JSON-RPC calls) carries the API key.
const fetchImpl: typeof fetch = (input, init) => {
  const req = new Request(input as RequestInfo, init);
  req.headers.set("Authorization", `Bearer ${KEY}`);
  return fetch(req);
};
// The card lives under the agent's endpoint, not at the host's root: pass its full URL and an empty path.
const client = await new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }),
).createFromUrl(`${API}/agents/${AGENT_ID}/a2a/.well-known/agent-card.json`, "");

const question = process.argv[2] ?? "How long do refunds take?";
const result = await client.sendMessage({
  tenant: "",
  configuration: undefined,
  metadata: undefined,
  message: {
    messageId: crypto.randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER, metadata: undefined, extensions: [], referenceTaskIds: [],
    parts: [{ content: { $case: "text", value: question }, metadata: undefined, filename: "", mediaType: "text/plain" }],
  },
});
// A task (the run) whose `answer` artifact holds the cited answer; its sources are in the artifact's metadata.
if (!result || !("artifacts" in result)) throw new Error(`expected a task, got ${JSON.stringify(result)}`);
for (const part of result.artifacts.flatMap((a) => a.parts)) if (part.content?.$case === "text") console.log(part.content.value);
console.log(`task ${result.id}: ${TaskState[result.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED]}`);
