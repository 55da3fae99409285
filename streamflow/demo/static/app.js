// The streamflow demo page: POST /api/chat, read the AI SDK v5 UI message stream (SSE), draw it.
// Model text is only ever inserted as text (textContent / text nodes), never parsed as HTML;
// the answer's Markdown is drawn by markdown.js, which builds the nodes itself. One run per Ask.
"use strict";

const $ = (selector) => document.querySelector(selector);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

let config = { prices: null };

function showModel(model) {
  if (model) $("#model").textContent = model;
}

function usageLine(metadata) {
  const usage = (metadata && metadata.usage_metadata) || {};
  const turns = (metadata && metadata.turns) || [];
  const input = usage.prompt_tokens || 0;
  const output = usage.response_tokens || 0;
  const parts = [];
  if (metadata && metadata.model) parts.push(metadata.model);
  parts.push(`${turns.length} turn${turns.length === 1 ? "" : "s"}`);
  parts.push(`${input.toLocaleString("en")} input + ${output.toLocaleString("en")} output tokens`);
  let cost = usage.cost;
  if (cost == null && config.prices) cost = (input * config.prices[0] + output * config.prices[1]) / 1e6;
  if (cost != null) parts.push(`$${cost.toFixed(4)}`);
  if (metadata && metadata.finish_reason) parts.push(metadata.finish_reason);
  return parts.join(" · ");
}

// One assistant answer: the state of the parts the stream opened, by id.
function answerView(container) {
  const answer = el("article", "assistant");
  answer.dataset.state = "streaming";
  container.append(answer);
  const texts = {}, reasonings = {}, tools = {};
  const pending = new Set();
  let frame = 0;
  let step = null;
  const footer = el("div", "usage");
  footer.dataset.testid = "usage";

  function currentStep() {
    if (!step) { step = el("section", "step"); answer.append(step); }
    return step;
  }

  function tool(id) {
    return tools[id];
  }

  // Markdown is re-drawn from the whole text so far, at most once a frame.
  function draw() {
    frame = 0;
    for (const text of pending) Markdown.render(text.node, text.source);
    pending.clear();
  }

  function changed(text) {
    pending.add(text);
    if (!frame) frame = requestAnimationFrame(draw);
  }

  function flush() {
    if (frame) cancelAnimationFrame(frame);
    draw();
  }

  function settle(id, className, status, text) {
    const t = tool(id);
    t.box.classList.add(className);
    t.status.textContent = status;
    t.result.textContent = text;
  }

  return function handle(chunk) {
    switch (chunk.type) {
      case "start-step": step = el("section", "step"); answer.append(step); break;
      case "text-start": texts[chunk.id] = { node: currentStep().appendChild(el("div", "text")), source: "" }; break;
      case "text-delta": texts[chunk.id].source += chunk.delta; changed(texts[chunk.id]); break;
      case "text-end": changed(texts[chunk.id]); flush(); break;
      case "reasoning-start": {
        const details = el("details", "thinking");
        details.append(el("summary", "", "Thinking"));
        reasonings[chunk.id] = details.appendChild(el("pre"));
        currentStep().append(details);
        break;
      }
      case "reasoning-delta": reasonings[chunk.id].append(document.createTextNode(chunk.delta)); break;
      case "tool-input-start": {
        const box = el("div", "tool");
        box.dataset.toolCallId = chunk.toolCallId;
        const status = el("span", "tool-status", "calling…");
        box.append(status, el("div", "tool-name", chunk.toolName));
        const args = box.appendChild(el("pre", "tool-args"));
        const result = box.appendChild(el("pre", "tool-result"));
        tools[chunk.toolCallId] = { box, status, args, result };
        currentStep().append(box);
        break;
      }
      case "tool-input-delta": tool(chunk.toolCallId).args.append(document.createTextNode(chunk.inputTextDelta)); break;
      case "tool-input-available": {
        const t = tool(chunk.toolCallId);
        t.args.textContent = pretty(chunk.input);
        t.status.textContent = "running…";
        break;
      }
      case "tool-input-error": settle(chunk.toolCallId, "failed", "bad arguments", chunk.errorText); break;
      case "tool-output-available": settle(chunk.toolCallId, "done", "✓ done", pretty(chunk.output)); break;
      case "tool-output-error": settle(chunk.toolCallId, "failed", "✖ failed", chunk.errorText); break;
      case "file": {
        if (chunk.mediaType.startsWith("image/")) {
          const img = el("img", "file");
          img.alt = "model image";
          img.src = chunk.url;
          currentStep().append(img);
        }
        break;
      }
      case "message-metadata":
        footer.textContent = usageLine(chunk.messageMetadata);
        answer.append(footer);
        showModel(chunk.messageMetadata && chunk.messageMetadata.model);
        break;
      case "finish":
        flush();
        footer.textContent = usageLine(chunk.messageMetadata);
        answer.append(footer);
        showModel(chunk.messageMetadata && chunk.messageMetadata.model);
        answer.dataset.state = "done";
        break;
      case "error":
        flush();
        answer.append(el("div", "error", chunk.errorText));
        answer.dataset.state = "error";
        break;
      default: break; // start, finish-step, data-* parts: nothing to draw
    }
  };
}

let running = false;

async function ask(prompt) {
  if (running) return; // one run at a time: a second Ask while one streams does nothing
  running = true;
  const conversation = $("#conversation");
  conversation.append(el("div", "user", prompt));
  const handle = answerView(conversation);
  $("#send").disabled = true;
  try {
    const response = await fetch("/api/chat", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt }),
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (data && data !== "[DONE]") handle(JSON.parse(data));
      }
    }
  } catch (error) {
    handle({ type: "error", errorText: String(error) });
  } finally {
    running = false;
    $("#send").disabled = false;
  }
}

async function start() {
  config = await (await fetch("/api/config")).json();
  $("#source").textContent = `${config.dialect} · ${config.live ? "live" : "bundled recording"} (${config.reason}) · `;
  $("#source").append(el("span", "", config.model || "the server's model"));
  $("#source").lastChild.id = "model";
  const input = $("#prompt");
  input.value = config.prompt;
  input.readOnly = !config.live;
  $("#ask").addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) ask(input.value.trim());
  });
  $("#send").disabled = false;
  $("#send").focus();
}

start();
