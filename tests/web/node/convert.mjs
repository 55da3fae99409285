// The AI SDK's own convertToModelMessages as the oracle of streamflow.servers.web.from_ui_messages:
// reads a JSON file [{name, messages}] (UIMessage[] histories), prints [{name, v5, latest}]:
// the model messages of `ai` (v5) and of `ai-latest` (the current major; null when absent).
import { readFileSync } from "node:fs";
import { convertToModelMessages as v5 } from "ai";

let latest = null;
try {
  ({ convertToModelMessages: latest } = await import("ai-latest"));
} catch {
  latest = null;
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = [];
for (const { name, messages } of cases) {
  out.push({
    name,
    v5: await v5(messages),
    latest: latest ? await latest(messages) : null,
  });
}
process.stdout.write(JSON.stringify(out));
