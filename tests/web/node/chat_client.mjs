// The AI SDK's own chat client (AbstractChat, the class React's useChat wraps, over
// DefaultChatTransport) driving a chat app, one step per command. Usage:
//   node chat_client.mjs <package: ai | ai-v6 | ai-latest> <api url, e.g. http://h/api/chat>
// Reads one JSON command a line on stdin, answers each with one JSON line on stdout:
//   {op: "open", id, messages, token?} a new chat (a page load: the stored messages as
//                                     initial, the resume token the page kept)
//   {op: "send", text, stopAfter?, stopUrl?}
//                                     sendMessage; with stopAfter, after that many chunks the
//                                     user stops: chat.stop(), or with stopUrl a POST there
//                                     (another instance) with the chat's x-resume-token
//   {op: "approve", approved, reason?} addToolApprovalResponse on the waiting call; the chat
//                                     sends the answer back itself (sendAutomaticallyWhen)
//   {op: "resume"}                    resumeStream (GET <api>/<id>/stream)
//   {op: "regenerate"}                regenerate the last answer
// Each answer: {messages, status, error, chunks (the chunk types the step read), finished
// (the onFinish flags), token}. The page says its AI SDK major (x-ai-sdk, from the
// package's own version) and sends the chat's x-resume-token once it has one.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [pkg, api] = process.argv.slice(2);
const ai = await import(pkg);
const version = JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`,
                                                import.meta.url), "utf8")).version;
const major = version.split(".")[0];

class State { // a ChatState, as the ai package's own tests write one
  constructor(messages = []) {
    this.messages = messages;
    this.status = "ready";
    this.error = undefined;
  }
  pushMessage = (message) => { this.messages = this.messages.concat(message); };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (index, message) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = (thing) => structuredClone(thing);
}

let token = null; // the chat's resume token, kept as the page keeps it
let chunks = [];
let onChunk = null;
let finished = [];
let chat = null;
let waiters = [];

class Transport extends ai.DefaultChatTransport { // counts the chunks the chat reads
  processResponseStream(stream) {
    return super.processResponseStream(stream).pipeThrough(new TransformStream({
      async transform(chunk, out) {
        chunks.push(chunk.type);
        out.enqueue(chunk);
        if (onChunk) await onChunk(chunks.length);
      },
    }));
  }
}

function open(id, messages) {
  chat = new ai.AbstractChat({
    id,
    state: new State(messages),
    transport: new Transport({
      api,
      headers: { "x-ai-sdk": major },
      fetch: async (url, init) => {
        const headers = new Headers(init.headers);
        if (token) headers.set("x-resume-token", token);
        const response = await fetch(url, { ...init, headers });
        token = response.headers.get("x-resume-token") ?? token;
        return response;
      },
    }),
    sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: ({ isAbort, isError, isDisconnect }) => {
      finished.push({ isAbort, isError, isDisconnect });
      for (const wake of waiters.splice(0)) wake();
    },
  });
}

const nextFinish = () => new Promise((resolve) => waiters.push(resolve));

async function step(command) {
  chunks = [];
  finished = [];
  onChunk = null;
  switch (command.op) {
    case "open":
      open(command.id, command.messages);
      token = command.token ?? token;
      break;
    case "send":
      if (command.stopAfter) {
        let stopped = false;
        onChunk = async (count) => {
          if (stopped || count < command.stopAfter) return;
          stopped = true;
          if (!command.stopUrl) { void chat.stop(); return; } // the stop button: abort
          const answer = await fetch(command.stopUrl, {
            method: "POST", headers: { "x-resume-token": token },
          });
          if (answer.status !== 204) throw new Error(`stop answered ${answer.status}`);
        };
      }
      await chat.sendMessage({ text: command.text });
      break;
    case "approve": {
      const part = chat.lastMessage.parts.find((p) => p.state === "approval-requested");
      const done = nextFinish(); // the chat re-sends on its own: wait for that answer
      await chat.addToolApprovalResponse({
        id: part.approval.id, approved: command.approved, reason: command.reason,
      });
      await done;
      break;
    }
    case "resume":
      await chat.resumeStream();
      break;
    case "regenerate":
      await chat.regenerate();
      break;
    default:
      throw new Error(`unknown op ${command.op}`);
  }
  return {
    messages: chat.messages, status: chat.status,
    error: chat.error ? String(chat.error.message ?? chat.error) : null, chunks, finished,
    token,
  };
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = await step(JSON.parse(line));
  } catch (error) {
    answer = { failed: String(error?.stack ?? error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
