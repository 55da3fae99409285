// Structured output in the browser protocols, read by the real clients: argv[2] is a JSON file
// {vercel, agui} of SSE bodies written by streamflow, argv[3] the AI SDK module to use ("ai"
// for v5, "ai-latest" for the current major). Prints, for the AI SDK, the schema errors and
// the data-output part of every UIMessage snapshot readUIMessageStream folds; for AG-UI, the
// schema errors and the agent state after every state change, applied by the real client.
import { readFileSync } from "node:fs";
import { AbstractAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { from } from "rxjs";

const [, , file, aiName] = process.argv;
const { readUIMessageStream, uiMessageChunkSchema } = await import(aiName);
const bodies = JSON.parse(readFileSync(file, "utf8"));

function sseData(body) {
  return body.split(/\r?\n\r?\n/).filter((e) => e.trim()).map((event) =>
    event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, "")).join("\n"));
}

async function vercel(body) {
  const chunks = sseData(body).filter((p) => p !== "[DONE]").map((p) => JSON.parse(p));
  const schemaErrors = [];
  for (const chunk of chunks) {
    const result = await uiMessageChunkSchema().validate(chunk);
    if (!result.success) schemaErrors.push(`${chunk.type}: ${result.error.message.slice(0, 200)}`);
  }
  const stream = new ReadableStream({
    start(controller) { for (const c of chunks) controller.enqueue(c); controller.close(); },
  });
  const snapshots = [];
  const streamErrors = [];
  for await (const message of readUIMessageStream({ stream, onError: (e) => streamErrors.push(String(e)) })) {
    const parts = message.parts.filter((p) => p.type === "data-output");
    snapshots.push({ count: parts.length, data: parts.length ? structuredClone(parts[0].data) : null });
  }
  return { schemaErrors, streamErrors, snapshots };
}

class Replay extends AbstractAgent {
  constructor(events) { super({}); this.events = events; }
  run() { return from(this.events); }
}

async function agui(body) {
  const events = sseData(body).map((raw) => JSON.parse(raw));
  const schemaErrors = [];
  for (const event of events) {
    const result = EventSchemas.safeParse(event);
    if (!result.success) schemaErrors.push(`${event.type}: ${result.error.message.slice(0, 200)}`);
  }
  const agent = new Replay(events);
  const states = [];
  let error = null;
  try {
    await agent.runAgent({}, { onStateChanged: ({ state }) => { states.push(structuredClone(state)); } });
  } catch (e) {
    error = String(e && e.message || e);
  }
  return { schemaErrors, states, final: agent.state, error };
}

process.stdout.write(JSON.stringify({ vercel: await vercel(bodies.vercel), agui: await agui(bodies.agui) }));
