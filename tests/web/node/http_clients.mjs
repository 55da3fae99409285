// The real clients over HTTP: the AI SDK's DefaultChatTransport (what useChat uses) posts to
// argv[2] and readUIMessageStream folds the answer; AG-UI's HttpAgent runs against argv[3].
// Prints {vercel: UIMessage, agui: {messages, events}}.
import { DefaultChatTransport, readUIMessageStream } from "ai";
import { HttpAgent } from "@ag-ui/client";

const question = "What's the weather in Lisbon?";

async function vercel(url) {
  const transport = new DefaultChatTransport({ api: url });
  const stream = await transport.sendMessages({
    chatId: "chat-1", trigger: "submit-message", messageId: undefined, abortSignal: undefined,
    messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: question }] }],
  });
  let message = null;
  const errors = [];
  for await (const snapshot of readUIMessageStream({ stream, onError: (e) => errors.push(String(e)) })) {
    message = snapshot;
  }
  return { message, errors };
}

async function agui(url) {
  const agent = new HttpAgent({ url, threadId: "thread-1",
    initialMessages: [{ id: "u1", role: "user", content: question }] });
  const events = [];
  await agent.runAgent({ runId: "run-1" }, { onEvent: ({ event }) => { events.push(event.type); } });
  return { messages: agent.messages, events };
}

const result = { vercel: await vercel(process.argv[2]), agui: await agui(process.argv[3]) };
process.stdout.write(JSON.stringify(result));
