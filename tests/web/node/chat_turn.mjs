// One turn of a chat as the real AI SDK client sends it: DefaultChatTransport posts the chat's
// messages to the app, readUIMessageStream folds the answer. Usage:
//   node chat_turn.mjs <api url> <chat id> <messages.json> [N [stop url]]
// With N, the user presses stop after N chunks: without a stop url the fetch is aborted (the
// AI SDK's stop()); with one, that URL (another instance) is POSTed with the chat's
// x-resume-token and the answer read on to its end. Prints {message, chunks, errors}.
import { readFileSync } from "node:fs";
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [api, chatId, file, stopAfter, stopUrl] = process.argv.slice(2);
const messages = JSON.parse(readFileSync(file, "utf8"));
const controller = new AbortController();
let token = null;
const transport = new DefaultChatTransport({
  api,
  fetch: async (url, init) => {
    const response = await fetch(url, init);
    token = response.headers.get("x-resume-token");
    return response;
  },
});
const stream = await transport.sendMessages({
  chatId, messages, trigger: "submit-message", messageId: undefined,
  abortSignal: controller.signal,
});
const types = [];
let stopped = false;
const counted = stream.pipeThrough(new TransformStream({
  async transform(chunk, out) {
    types.push(chunk.type);
    out.enqueue(chunk);
    if (stopAfter && !stopped && types.length >= Number(stopAfter)) {
      stopped = true;
      if (!stopUrl) controller.abort();
      else {
        const answer = await fetch(stopUrl, { method: "POST", headers: { "x-resume-token": token } });
        if (answer.status !== 204) throw new Error(`stop answered ${answer.status}`);
      }
    }
  },
}));
let message = null;
const errors = [];
try {
  for await (const snapshot of readUIMessageStream({ stream: counted, onError: (e) => errors.push(String(e)) })) {
    message = snapshot;
  }
} catch (error) {
  if (!stopAfter) throw error;
  errors.push(String(error));
}
process.stdout.write(JSON.stringify({ message, chunks: types, errors }));
