#!/usr/bin/env python3
"""A PatchBench agent in Python with the standard library alone.

It speaks MCP's JSON-RPC by hand, over either transport PatchBench serves:

- streamable HTTP, as the actor mcp:COMMAND (PATCHBENCH_MCP_URL is set):
  each message is one POST to PATCHBENCH_MCP_URL with the bearer token
  PATCHBENCH_MCP_TOKEN; the answer comes as a server-sent event stream
  (text/event-stream) or as plain JSON, and the session id that initialize
  answers goes in the header Mcp-Session-Id of every later request;
- standard input and output of `patchbench mcp`, which it starts with the
  command line it is given: one JSON message a line each way.

It reads the step's task, looks up what it needs with the tools and
proposes a patch. The decision (which patch) is scripted for the example
case sup-address-change, where a real agent would ask a model; the rest
(the handshake, the tools, the step and case ends) is what any agent does.

  patchbench run --protocol tools --case sup-address-change \\
      --actor 'mcp:python3 examples/agents/python/agent.py'
  python3 examples/agents/python/agent.py patchbench mcp --case sup-address-change --out /tmp/pb-mcp
"""

import json
import os
import subprocess
import sys
import urllib.request

session_id = None
server = None  # the patchbench mcp process, over standard input and output
next_id = 0


def send(msg):
    """Sends one JSON-RPC message; returns the messages that came back."""
    global session_id
    if server:
        server.stdin.write(json.dumps(msg) + "\n")
        server.stdin.flush()
        if "id" not in msg:
            return []
        while True:  # skip the server's notifications, if any
            line = server.stdout.readline()
            if not line:
                raise RuntimeError("patchbench mcp ended")
            answer = json.loads(line)
            if answer.get("id") == msg["id"]:
                return [answer]
    headers = {
        "Authorization": "Bearer " + os.environ["PATCHBENCH_MCP_TOKEN"],
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",  # both, or HTTP 400
    }
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    req = urllib.request.Request(os.environ["PATCHBENCH_MCP_URL"], json.dumps(msg).encode(), headers)
    with urllib.request.urlopen(req, timeout=60) as resp:  # HTTP errors raise
        session_id = resp.headers.get("Mcp-Session-Id") or session_id
        body = resp.read().decode()  # a notification's: HTTP 202, empty
    if resp.headers.get("Content-Type", "").startswith("text/event-stream"):
        return sse_messages(body)
    return [json.loads(body)] if body.strip() else []


def rpc(method, params, notification=False):
    """Sends a request and returns its result (a notification: None)."""
    global next_id
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notification:
        next_id += 1
        msg["id"] = next_id
    answers = send(msg)
    if notification:
        return None
    for answer in answers:
        if answer.get("id") == msg["id"]:
            if "error" in answer:
                raise RuntimeError("%s: %s" % (method, answer["error"]))
            return answer["result"]
    raise RuntimeError("%s: no answer in %r" % (method, answers))


def sse_messages(body):
    """The JSON-RPC messages of an SSE stream: each event's data lines, joined."""
    messages, data = [], []
    for line in body.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:  # a blank line ends an event
            messages.append(json.loads("\n".join(data)))
            data = []
    return messages


def call(tool, **arguments):
    """Calls a tool; returns its text and whether it is an error result."""
    result = rpc("tools/call", {"name": tool, "arguments": arguments})
    return result["content"][0]["text"], result.get("isError", False)


def read(pointer):
    """The JSON value at pointer, as this step may see it."""
    text, is_error = call("read_state", pointer=pointer)
    if is_error:
        raise RuntimeError("read_state %s: %s" % (pointer, text))
    return json.loads(text)


def plan(task):
    """The patch and note for the step of this task.

    Scripted for the step of sup-address-change: send the orders the
    carrier still allows to change to the request's new address, add it to
    the address book, and log each change.
    """
    request = read("/request")
    new = request["new_address"]
    allowed = read("/carrier_rules/address_change_allowed_statuses")
    query = "$.orders[?" + " || ".join("@.status == '%s'" % s for s in allowed) + "]"
    text, is_error = call("query_state", path=query)
    if is_error:
        raise RuntimeError("query_state: " + text)
    patch = [{"op": "add", "path": "/customer/addresses/-", "value": {"label": "home", **new}}]
    for match in json.loads(text)["matches"]:
        order = match["pointer"]
        old = read(order + "/ship_to/postcode")
        patch.append({"op": "copy", "from": "/request/new_address", "path": order + "/ship_to"})
        patch.append({"op": "add", "path": "/change_log/-", "value": {
            "order_id": match["value"]["id"], "field": "ship_to", "request_id": request["id"],
            "note": "Redirected from %s to %s (%s) at the customer's request (%s)."
                    % (old, new["postcode"], new["line1"], request["id"])}})
    return patch, "Redirected the orders the carrier still allows to change, added the new address and logged it."


def main():
    global server
    if len(sys.argv) > 1:  # the command line of patchbench mcp
        server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8")
    elif "PATCHBENCH_MCP_URL" not in os.environ:
        sys.exit("run me as patchbench run --actor 'mcp:python3 agent.py', or give me patchbench mcp's command line")
    init = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "python-example", "version": "1"}})
    print(init["instructions"].split("\n")[0][:80], file=sys.stderr)  # names the case
    rpc("notifications/initialized", {}, notification=True)
    tools = [t["name"] for t in rpc("tools/list", {})["tools"]]
    print("tools:", ", ".join(tools), file=sys.stderr)
    task = rpc("prompts/get", {"name": "task"})["messages"][0]["content"]["text"]
    while True:
        patch, note = plan(task)
        result, _ = call("propose_patch", patch=patch, note=note)
        print(result.split("\n")[0], file=sys.stderr)
        if not result.startswith("committed"):
            sys.exit("not committed: " + result)  # a real agent would read why and try again
        head, sep, task = result.partition("\n\nThe next step's task:\n")
        if not sep:  # "The case is over: every step has run."
            break
    if server:
        server.stdin.close()  # ends the session: patchbench mcp records the run and exits
        server.wait()


if __name__ == "__main__":
    main()
