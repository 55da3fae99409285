// The real clients as oracles: reads cases.json ([{name, vercel, vercelLatest?, agui}], SSE
// bodies written by streamflow), prints one result per case: the AI SDK v5 schema errors and the
// UIMessage that readUIMessageStream folds, the same with AI SDK 6 ("ai-v6", reading vercelV6 when
// the case has one) and the current AI SDK major ("ai-latest", reading vercelLatest when the case
// has one, else vercel), and the AG-UI schema errors and
// verifyEvents' verdict.
import { readFileSync } from "node:fs";
import * as ai5 from "ai";
import * as ai6 from "ai-v6";
import * as aiLatest from "ai-latest";
import { EventSchemas } from "@ag-ui/core/schemas";
import { verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";

function sseData(body) {
  // data payloads of an SSE body (every event here is one `data:` line)
  return body.split(/\r?\n\r?\n/).filter((e) => e.trim()).map((event) =>
    event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, "")).join("\n"));
}

async function checkVercel(body, { readUIMessageStream, uiMessageChunkSchema } = ai5) {
  const payloads = sseData(body);
  const errors = [];
  const done = payloads.at(-1) === "[DONE]";
  const chunks = [];
  for (const raw of payloads.filter((p) => p !== "[DONE]")) {
    const chunk = JSON.parse(raw);
    const result = await uiMessageChunkSchema().validate(chunk);
    if (!result.success) errors.push(`${raw.slice(0, 120)}: ${result.error.message.slice(0, 300)}`);
    chunks.push(chunk);
  }
  const streamErrors = [];
  const stream = new ReadableStream({
    start(controller) { for (const c of chunks) controller.enqueue(c); controller.close(); },
  });
  let message = null;
  for await (const snapshot of readUIMessageStream({ stream, onError: (e) => streamErrors.push(String(e)) })) {
    message = snapshot;
  }
  return { schemaErrors: errors, streamErrors, done, types: chunks.map((c) => c.type), message };
}

async function checkAgui(body) {
  const events = sseData(body).map((raw) => JSON.parse(raw));
  const errors = [];
  for (const event of events) {
    const result = EventSchemas.safeParse(event);
    if (!result.success) errors.push(`${event.type}: ${result.error.message.slice(0, 300)}`);
  }
  let verifyError = null;
  try {
    await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
  } catch (e) {
    verifyError = String(e && e.message || e);
  }
  return { schemaErrors: errors, verifyError, types: events.map((e) => e.type) };
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const c of cases) {
  results.push({
    name: c.name,
    vercel: await checkVercel(c.vercel),
    vercelV6: c.vercelV6 ? await checkVercel(c.vercelV6, ai6) : null,
    vercelLatest: await checkVercel(c.vercelLatest ?? c.vercel, aiLatest),
    agui: await checkAgui(c.agui),
  });
}
process.stdout.write(JSON.stringify(results));
