// A PatchBench agent in TypeScript on the official MCP SDK
// (@modelcontextprotocol/sdk). The SDK does the handshake, the session
// and the event streams, over either transport PatchBench serves:
// streamable HTTP as the actor mcp:COMMAND (PATCHBENCH_MCP_URL and
// PATCHBENCH_MCP_TOKEN are set; the agent adds the bearer token to each
// request), or the standard input and output of `patchbench mcp`, which it
// starts with the command line it is given.
//
// It reads the step's task, looks up what it needs with the tools and
// proposes a patch. The decision (which patch) is scripted for the example
// case sup-address-change, where a real agent would ask a model; the rest
// (the tools, the step and case ends) is what any agent does. Build and run
// it as examples/agents/README.md says.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

type Op = { op: string; path: string; from?: string; value?: unknown };
type Match = { pointer: string; value: { id: string } };

const url = process.env.PATCHBENCH_MCP_URL;
const token = process.env.PATCHBENCH_MCP_TOKEN;
const [command, ...args] = process.argv.slice(2); // patchbench mcp's command line, if given
const client = new Client({ name: "typescript-example", version: "1.0.0" });
if (command) {
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
} else if (url && token) {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
} else {
  throw new Error("run me as patchbench run --actor 'mcp:node agent.js', or give me patchbench mcp's command line");
}
console.error(client.getInstructions()?.split("\n")[0].slice(0, 80)); // names the case
const { tools } = await client.listTools();
console.error("tools:", tools.map((t) => t.name).join(", "));

// call calls a tool and returns its text; an error result throws.
async function call(name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0].text;
  if (result.isError) throw new Error(`${name}: ${text}`);
  return text;
}
const read = async (pointer: string): Promise<any> => JSON.parse(await call("read_state", { pointer }));

// plan is the patch and note for the step of task. Scripted for the step
// of sup-address-change: send the orders the carrier still allows to
// change to the request's new address, add it to the address book, and
// log each change.
async function plan(task: string): Promise<{ patch: Op[]; note: string }> {
  const request = await read("/request");
  const fresh = request.new_address;
  const allowed: string[] = await read("/carrier_rules/address_change_allowed_statuses");
  const path = `$.orders[?${allowed.map((s) => `@.status == '${s}'`).join(" || ")}]`;
  const { matches } = JSON.parse(await call("query_state", { path })) as { matches: Match[] };
  const patch: Op[] = [{ op: "add", path: "/customer/addresses/-", value: { label: "home", ...fresh } }];
  for (const { pointer, value } of matches) {
    const old = await read(`${pointer}/ship_to/postcode`);
    patch.push({ op: "copy", from: "/request/new_address", path: `${pointer}/ship_to` });
    patch.push({
      op: "add",
      path: "/change_log/-",
      value: {
        order_id: value.id,
        field: "ship_to",
        request_id: request.id,
        note: `Redirected from ${old} to ${fresh.postcode} (${fresh.line1}) at the customer's request (${request.id}).`,
      },
    });
  }
  return { patch, note: "Redirected the orders the carrier still allows to change, added the new address and logged it." };
}

const prompt = await client.getPrompt({ name: "task" });
let task = (prompt.messages[0].content as { text: string }).text;
for (;;) {
  const { patch, note } = await plan(task);
  const result = await call("propose_patch", { patch, note });
  console.error(result.split("\n")[0]);
  if (!result.startsWith("committed")) throw new Error(`not committed: ${result}`); // a real agent would try again
  const next = result.split("\n\nThe next step's task:\n");
  if (next.length < 2) break; // "The case is over: every step has run."
  task = next[1];
}
await client.close(); // over stdio: ends the session, and patchbench mcp records the run and exits
