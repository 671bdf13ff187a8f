// An MCP client written against the official TypeScript SDK
// (@modelcontextprotocol/sdk, installed by scripts/mcp-ts-sdk.sh), run by
// TestMCPCommandTypeScript: it starts patchbench mcp (the test binary as
// patchbench: PATCHBENCH_TEST_MAIN) over stdio, reads the instructions,
// the task prompt and a hidden location, and commits the example case's
// step. It prints "ok" when everything was as expected, and exits 3
// otherwise, saying what on standard error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

function fail(msg) { console.error("client: " + msg); process.exit(3); }
const [command, ...args] = JSON.parse(process.env.PATCHBENCH_MCP_COMMAND);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "ignore" });
const client = new Client({ name: "ts-stdio", version: "1.0.0" });
await client.connect(transport);
if (!client.getInstructions().includes("case sup-example-refund")) fail("instructions: " + client.getInstructions());
const task = await client.getPrompt({ name: "task" });
if (!task.messages[0].content.text.includes("You may write")) fail("task: " + JSON.stringify(task));
const text = async (name, a) => (await client.callTool({ name, arguments: a })).content[0].text;
const hidden = await text("read_state", { pointer: "/customer/card_number" });
if (!hidden.startsWith("error: absent")) fail("hidden read: " + hidden);
const right = await text("propose_patch", {
  patch: [
    { op: "replace", path: "/ticket/reply", value: "Dear Ada, a refund of 42.50 EUR is on its way." },
    { op: "replace", path: "/ticket/status", value: "resolved" },
    { op: "add", path: "/audit/-", value: "refund confirmed" },
  ],
  note: "Refund confirmed.",
});
if (!right.includes("committed") || !right.includes("The case is over")) fail("proposal: " + right);
await client.close();
console.log("ok");
