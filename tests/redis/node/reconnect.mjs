// The real AI SDK v5 resuming a chat: DefaultChatTransport.reconnectToStream({chatId}).
// usage: node reconnect.mjs <dir with node_modules/ai> <api base, e.g. http://127.0.0.1:8002/ui/chat> <chatId> [resume token] [last-event-id]
// The token goes in the x-resume-token header, set by prepareReconnectToStreamRequest (as
// docs/SECURITY.md shows). Prints {"none": true} (HTTP 204: nothing to resume),
// {"error": "<message>"} (the Error the transport threw) or {"chunks": [...], "text": "..."}.
import { pathToFileURL } from "node:url";
import path from "node:path";

const [nodeDir, api, chatId, token, lastEventId] = process.argv.slice(2);
const ai = await import(pathToFileURL(path.join(nodeDir, "node_modules/ai/dist/index.mjs")).href);
const transport = new ai.DefaultChatTransport({
  api,
  prepareReconnectToStreamRequest: ({ headers }) => ({
    headers: { ...headers, ...(token ? { "x-resume-token": token } : {}) },
  }),
});
const headers = lastEventId ? { "Last-Event-ID": lastEventId } : {};
let stream;
try {
  stream = await transport.reconnectToStream({ chatId, headers });
} catch (error) {
  console.log(JSON.stringify({ error: error.message }));
  process.exit(0);
}
if (stream === null) {
  console.log(JSON.stringify({ none: true }));
} else {
  const chunks = [];
  const [mine, folded] = stream.tee();
  const reading = (async () => { for await (const chunk of mine) chunks.push(chunk); })();
  let message = null;
  for await (const m of ai.readUIMessageStream({ stream: folded })) message = m;
  await reading;
  const text = (message?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");
  console.log(JSON.stringify({ chunks, text }));
}
