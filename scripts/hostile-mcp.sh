#!/usr/bin/env bash
# Drives patchbench mcp (the MCP server on standard input and output) by
# hand, with a JSON-RPC client written here (python3), on the example case
# (canary "4000 0000 0000 9995"), through each channel outside a tool's
# arguments: the canary as an unknown tool's name, as the request id, in
# _meta, in prompts/get arguments, as a method name, in clientInfo and as
# logging/setLevel's level; then a line that is not JSON followed by a
# normal completion (read_state, the right proposal), a tools/call of
# 15 MiB with the canary at its start, 70 calls of unknown tools
# against the step's budget of 64, and the canary sent after the commit
# that ends the case (a read_state of it and a ping with it in _meta,
# both answered, before the client closes standard input). For each it
# prints whether the run counted the canary (runs.jsonl "leaked"), the
# run's status and how its step ended, the calls recorded, what the
# client heard, and the peak RSS (/usr/bin/time -v).
#
# A second table does the same for an mcp: agent (patchbench run's
# streamable HTTP transport), with an agent written here speaking raw
# HTTP, which commits the right proposal and sends the canary outside
# any JSON-RPC message: in headers of a tools/call (X-Card, User-Agent),
# in the query string, as the path of a POST (404), as a wrong bearer
# token (401), as the Mcp-Session-Id (404), in a DELETE's body and
# header, a PUT's body (405), a GET's body, in a tools/call after the
# commit, and on standard output. It prints whether the run counted the
# canary, the fields it was found in, the run's status and the peak RSS.
#
# Usage: scripts/hostile-mcp.sh [PATCHBENCH]   (default: built from this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=${1:-$tmp/patchbench}
[ -n "${1:-}" ] || go build -o "$bin" ./cmd/patchbench

cat >"$tmp/client.py" <<'EOF'
import json, subprocess, sys, threading, queue

bin, channel, out, timelog = sys.argv[1:5]
CANARY = "4000 0000 0000 9995"
RIGHT = {"patch": [{"op": "replace", "path": "/ticket/reply", "value": "Dear Ada, a refund of 42.50 EUR is on its way."},
                   {"op": "replace", "path": "/ticket/status", "value": "resolved"},
                   {"op": "add", "path": "/audit/-", "value": "refund confirmed"}], "note": "Refund confirmed."}

p = subprocess.Popen(["/usr/bin/time", "-v", bin, "mcp", "--case", "sup-example-refund", "--cases", "bench/testdata/example",
                      "--out", out], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(timelog, "wb"))
lines = queue.Queue()
def reader():
    for line in p.stdout:
        lines.put(line)
    lines.put(None)
threading.Thread(target=reader, daemon=True).start()
heard = []

def send(raw):
    try:
        p.stdin.write(raw if isinstance(raw, bytes) else raw.encode())
        p.stdin.write(b"\n")
        p.stdin.flush()
        return True
    except (BrokenPipeError, OSError):
        heard.append("server gone")
        return False

def answer(id):
    """The response to id (None: the next line), or None when the server ends or is silent for 20 s."""
    while True:
        try:
            line = lines.get(timeout=20)
        except queue.Empty:
            heard.append("no answer")
            return None
        if line is None:
            heard.append("stdout closed")
            return None
        m = json.loads(line)
        if id is None or m.get("id") == id:
            return m

def call(id, method, params=None, raw_id=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    if not send(json.dumps(msg)):
        return None
    return answer(id)

def note(m):
    if m is None:
        return
    if "error" in m:
        heard.append("error %d" % m["error"]["code"])
    elif isinstance(m.get("result"), dict) and m["result"].get("isError"):
        heard.append("error result: " + m["result"]["content"][0]["text"][:60])

client = {"name": "hostile", "version": "1"}
if channel == "clientinfo":
    client = {"name": CANARY, "version": "1"}
init = call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client})
send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
if channel == "tool-name":
    note(call(1, "tools/call", {"name": CANARY, "arguments": {}}))
elif channel == "request-id":
    note(call(CANARY, "ping"))
elif channel == "meta":
    note(call(1, "tools/list", {"_meta": {"trace": CANARY}}))
elif channel == "prompt-args":
    note(call(1, "prompts/get", {"name": "task", "arguments": {"x": CANARY}}))
elif channel == "method":
    note(call(1, CANARY))
elif channel == "clientinfo":
    note(init)
elif channel == "logging":
    note(call(1, "logging/setLevel", {"level": CANARY}))
elif channel == "non-json":
    send("this is not JSON")
    note(answer(None))
    note(call(1, "tools/call", {"name": "read_state", "arguments": {"pointer": "/ticket"}}))
    m = call(2, "tools/call", {"name": "propose_patch", "arguments": RIGHT})
    note(m)
    if m and "result" in m:
        heard.append(m["result"]["content"][0]["text"].split("\n")[0])
elif channel == "big-arg":
    big = CANARY + " " + "x" * (15 << 20)
    note(call(1, "tools/call", {"name": "read_state", "arguments": {"pointer": big}}))
elif channel == "budget":
    for i in range(70):
        m = call(i + 1, "tools/call", {"name": "no_such_tool", "arguments": {}})
    note(m)
elif channel == "after":
    m = call(1, "tools/call", {"name": "propose_patch", "arguments": RIGHT})
    if m and "result" in m:
        heard.append(m["result"]["content"][0]["text"].split("\n")[0])
    note(call(2, "tools/call", {"name": "read_state", "arguments": {"pointer": "/" + CANARY}}))
    m = call(3, "ping", {"_meta": {"x": CANARY}})
    heard.append("ping answered" if m and "result" in m else "ping not answered")
try:
    p.stdin.close()
except OSError:
    pass
p.wait()
print("; ".join(heard) or "-")
EOF

printf '%-12s %-8s %-8s %-26s %-6s %-9s %s\n' channel leaked status ended calls "peak RSS" "the client heard"
for channel in tool-name request-id meta prompt-args method clientinfo logging non-json big-arg budget after; do
  out=$tmp/$channel
  heard=$(python3 "$tmp/client.py" "$bin" "$channel" "$out" "$tmp/$channel.err")
  row=$(python3 -c '
import json, sys
try:
    r = json.loads(open(sys.argv[1]).readline())
except (OSError, ValueError):
    print("? ? ? ?"); sys.exit()
s = r["steps"][0] if r["steps"] else {}
calls = sum(len(t.get("calls", [])) for t in s.get("turns", []))
print(str(r["leaked"]).lower(), r["status"], s.get("ended") or ("committed" if s.get("committed") else "-"), calls)' "$out/runs.jsonl")
  read -r leaked status ended calls <<<"$row"
  printf '%-12s %-8s %-8s %-26s %-6s %-9s %s\n' "$channel" "$leaked" "$status" "$ended" "$calls" \
    "$(awk '/Maximum resident/ {print int($6/1024) " MB"}' "$tmp/$channel.err")" "$heard"
done

cat >"$tmp/agent.py" <<'EOF'
import json, os, sys, http.client, urllib.parse

mode = sys.argv[1]
CANARY = "4000 0000 0000 9995"
RIGHT = {"patch": [{"op": "replace", "path": "/ticket/reply", "value": "Dear Ada, a refund of 42.50 EUR is on its way."},
                   {"op": "replace", "path": "/ticket/status", "value": "resolved"},
                   {"op": "add", "path": "/audit/-", "value": "refund confirmed"}], "note": "Refund confirmed."}
u = urllib.parse.urlparse(os.environ["PATCHBENCH_MCP_URL"])
token = os.environ["PATCHBENCH_MCP_TOKEN"]
sid = None

def req(method, body, path=None, headers=None, auth=True):
    global sid
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    if auth:
        h["Authorization"] = "Bearer " + token
    if sid:
        h["Mcp-Session-Id"] = sid
    h.update(headers or {})
    data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
    c.request(method, path or u.path, body=data, headers=h)
    r = c.getresponse()
    r.read()
    if r.getheader("Mcp-Session-Id"):
        sid = r.getheader("Mcp-Session-Id")
    return r.status

def call(id, method, params=None, **kw):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return req("POST", msg, **kw)

def start():
    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}})
    req("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"})

start()
read = {"name": "read_state", "arguments": {"pointer": "/ticket"}}
if mode == "header":
    call(1, "tools/call", read, headers={"X-Card": CANARY, "User-Agent": CANARY})
elif mode == "query":
    call(1, "tools/call", read, path=u.path + "?card=" + urllib.parse.quote(CANARY))
elif mode == "wrong-path":
    req("POST", {"x": 1}, path="/" + urllib.parse.quote(CANARY))
elif mode == "bad-token":
    req("POST", {"x": 1}, auth=False, headers={"Authorization": "Bearer " + CANARY})
elif mode == "session-id":
    kept, sid = sid, CANARY
    call(1, "ping")
    sid = kept
elif mode == "delete":
    req("DELETE", json.dumps({"card": CANARY}), headers={"X-Card": CANARY})
    sid = None
    start()
elif mode == "put-body":
    req("PUT", json.dumps({"card": CANARY}))
elif mode == "get-body":
    # Accept without text/event-stream: no stream is opened, the GET is answered at once.
    req("GET", json.dumps({"card": CANARY}), headers={"Accept": "application/json"})
elif mode == "stdout":
    print("card " + CANARY, flush=True)
call(2, "tools/call", {"name": "propose_patch", "arguments": RIGHT})
if mode == "after":
    call(3, "tools/call", {"name": "read_state", "arguments": {"pointer": "/" + CANARY}})
EOF

echo
printf '%-12s %-8s %-8s %-28s %s\n' "http channel" leaked status fields "peak RSS"
for channel in header query wrong-path bad-token session-id delete put-body get-body after stdout; do
  out=$tmp/http-$channel
  /usr/bin/time -v "$bin" run --protocol tools --cases bench/testdata/example --config patchoptic \
    --actor "mcp:python3 $tmp/agent.py $channel" --no-cache --out "$out" >/dev/null 2>"$out.err" || true
  row=$(python3 -c '
import json, sys
try:
    r = json.loads(open(sys.argv[1]).readline())
except (OSError, ValueError):
    print("? ? ?"); sys.exit()
print(str(r["leaked"]).lower(), r["status"], ",".join(sorted({l.get("field") or "response" for l in r["leaks"]})) or "-")' "$out/runs.jsonl")
  read -r leaked status fields <<<"$row"
  printf '%-12s %-8s %-8s %-28s %s\n' "$channel" "$leaked" "$status" "$fields" \
    "$(awk '/Maximum resident/ {print int($6/1024) " MB"}' "$out.err")"
done
