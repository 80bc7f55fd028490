// test/docs/snippets/openai-client.ts
// A knowledge base through the OpenAI-compatible endpoint with the `openai` package, with the API, KEY and KB_ID of the
// shell session:   npx node test/docs/snippets/openai-client.ts "How long do refunds take?"
import OpenAI from "openai";

const { API, KEY, KB_ID } = process.env;
const client = new OpenAI({ baseURL: `${API}/openai`, apiKey: KEY });
const stream = await client.chat.completions.create({
  model: `kb:${KB_ID}`,
  stream: true,
  messages: [{ role: "user", content: process.argv[2] ?? "How long do refunds take?" }],
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? "");
process.stdout.write("\n");
