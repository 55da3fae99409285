// One turn of a chat as the real AI SDK client sends it: DefaultChatTransport posts the chat's
// messages to the app, readUIMessageStream folds the answer. Usage:
//   node chat_turn.mjs <api url> <chat id> <messages.json> [abort after N chunks]
// Prints {message, chunks} (the folded assistant UIMessage, the chunk types read).
import { readFileSync } from "node:fs";
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [api, chatId, file, abortAfter] = process.argv.slice(2);
const messages = JSON.parse(readFileSync(file, "utf8"));
const controller = new AbortController();
const transport = new DefaultChatTransport({ api });
const stream = await transport.sendMessages({
  chatId, messages, trigger: "submit-message", messageId: undefined,
  abortSignal: controller.signal,
});
const types = [];
const counted = stream.pipeThrough(new TransformStream({
  transform(chunk, out) {
    types.push(chunk.type);
    out.enqueue(chunk);
    if (abortAfter && types.length >= Number(abortAfter)) controller.abort();
  },
}));
let message = null;
try {
  for await (const snapshot of readUIMessageStream({ stream: counted })) message = snapshot;
} catch (error) {
  if (!abortAfter) throw error;
}
process.stdout.write(JSON.stringify({ message, chunks: types }));
