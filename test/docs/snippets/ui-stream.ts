// test/docs/snippets/ui-stream.ts
// What useChat does, without React: the AI SDK's DefaultChatTransport sends a question to POST /chats/:id/ui-stream and
// readUIMessageStream builds the answer's message, with the API, KEY, TENANT_ID and KB_ID of the shell session:
//   npx node test/docs/snippets/ui-stream.ts "How long do refunds take?"
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";

const { API, KEY, TENANT_ID, KB_ID } = process.env;
const headers = { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" };
// useChat continues a chat made first with POST /chats (by your backend, or with an embed token).
const chatId = crypto.randomUUID();
const made = await fetch(`${API}/chats`, {
  method: "POST",
  headers,
  body: JSON.stringify({ id: chatId, tenant_id: TENANT_ID, knowledge_base_id: KB_ID, model: "local-extractive", agent_mode: "quick" }),
});
if (!made.ok) throw new Error(`POST /chats: ${made.status} ${await made.text()}`);

const transport = new DefaultChatTransport<UIMessage>({ api: `${API}/chats/${chatId}/ui-stream`, headers: { Authorization: `Bearer ${KEY}` } });
const question: UIMessage = { id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text: process.argv[2] ?? "How long do refunds take?" }] };
const chunks = await transport.sendMessages({ trigger: "submit-message", chatId, messageId: undefined, messages: [question], abortSignal: undefined });
let answer: UIMessage | undefined;
for await (const message of readUIMessageStream({ stream: chunks })) answer = message;

for (const part of answer?.parts ?? []) {
  if (part.type === "text") console.log(part.text);
  else if (part.type === "source-document") console.log(`[${part.sourceId}] ${part.title}`);
  else if (part.type === "source-url") console.log(`[${part.sourceId}] ${part.url}`);
}
console.log("metadata:", JSON.stringify(answer?.metadata));
