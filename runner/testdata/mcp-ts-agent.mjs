// An MCP agent written against the official TypeScript SDK
// (@modelcontextprotocol/sdk, installed by scripts/mcp-ts-sdk.sh), run by
// runner's TestMCPTypeScriptClient as actor mcp:COMMAND: it connects over
// streamable HTTP with the bearer token, reads the task, reads the state,
// makes a wrong proposal, then the right one. It exits 3 on anything
// unexpected, saying what on standard error.
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.PATCHBENCH_MCP_URL;
const token = process.env.PATCHBENCH_MCP_TOKEN;
function fail(msg) { console.error("agent: " + msg); process.exit(3); }
if (!url || !token) fail("no PATCHBENCH_MCP_URL or PATCHBENCH_MCP_TOKEN");

const client = new Client({ name: "ts-agent", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: "Bearer " + token } },
});
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
if (tools.join(",") !== "propose_patch,query_state,read_state,search_state") fail("tools: " + tools);
const task = await client.getPrompt({ name: "task" });
if (!task.messages[0].content.text.includes("Propose your patch")) fail("task: " + JSON.stringify(task));
const text = async (name, args) => (await client.callTool({ name, arguments: args })).content[0].text;
const hidden = await text("read_state", { pointer: "/customer/card_number" });
if (!hidden.startsWith("error: absent")) fail("hidden read: " + hidden);
const wrong = await text("propose_patch", { patch: [{ op: "replace", path: "/order/status", value: "refunded" }], note: "x" });
if (!wrong.includes("write_outside_region")) fail("wrong proposal: " + wrong);
const right = await text("propose_patch", {
  patch: [
    { op: "replace", path: "/ticket/reply", value: "Dear Ada, a refund of 42.50 EUR is on its way." },
    { op: "replace", path: "/ticket/status", value: "resolved" },
    { op: "add", path: "/audit/-", value: "refund confirmed" },
  ],
  note: "Refund confirmed.",
});
if (!right.includes("committed") || !right.includes("The case is over")) fail("right proposal: " + right);
await client.close();
if (process.env.PATCHBENCH_TEST_MCP_OK) writeFileSync(process.env.PATCHBENCH_TEST_MCP_OK, "ok");
