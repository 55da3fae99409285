// One turn of a chat through AG-UI's real HttpAgent: it holds the thread's messages (read from
// and written back to messages.json), adds the user's text and runs against the app. Usage:
//   node agui_turn.mjs <url> <thread id> <messages.json> <user text>
// Prints {messages, events} (the agent's messages after the run, the event types seen).
import { readFileSync, writeFileSync } from "node:fs";
import { HttpAgent } from "@ag-ui/client";

const [url, threadId, file, text] = process.argv.slice(2);
const initialMessages = JSON.parse(readFileSync(file, "utf8"));
initialMessages.push({ id: `u${initialMessages.length}`, role: "user", content: text });
const agent = new HttpAgent({ url, threadId, initialMessages });
const events = [];
await agent.runAgent({ runId: `run-${initialMessages.length}` },
  { onEvent: ({ event }) => { events.push(event.type); } });
writeFileSync(file, JSON.stringify(agent.messages));
process.stdout.write(JSON.stringify({ messages: agent.messages, events }));
