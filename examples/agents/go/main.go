// The go example is a PatchBench agent in Go on the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk). The SDK does the handshake,
// the session and the event streams, over either transport PatchBench
// serves: streamable HTTP as the actor mcp:COMMAND (PATCHBENCH_MCP_URL
// and PATCHBENCH_MCP_TOKEN are set; the agent adds the bearer token to
// each request), or the standard input and output of `patchbench mcp`,
// which it starts with the command line it is given.
//
// It reads the step's task, looks up what it needs with the tools and
// proposes a patch. The decision (which patch) is scripted for the example
// case sup-address-change, where a real agent would ask a model; the rest
// (the tools, the step and case ends) is what any agent does:
//
//	go build -o /tmp/go-agent ./examples/agents/go
//	patchbench run --protocol tools --case sup-address-change --actor mcp:/tmp/go-agent
//	/tmp/go-agent patchbench mcp --case sup-address-change --out /tmp/pb-mcp
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the run's token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// agent is one session with the run's server.
type agent struct {
	ctx  context.Context
	sess *mcp.ClientSession
}

// call calls a tool and returns its text; an error result is an error.
func (a agent) call(name string, args map[string]any) (string, error) {
	res, err := a.sess.CallTool(a.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return "", fmt.Errorf("%s: %s", name, text)
	}
	return text, nil
}

// read decodes the JSON value at pointer, as the step may see it, into v.
func (a agent) read(pointer string, v any) error {
	text, err := a.call("read_state", map[string]any{"pointer": pointer})
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(text), v)
}

// plan is the patch and note for the step of task. Scripted for the step
// of sup-address-change: send the orders the carrier still allows to
// change to the request's new address, add it to the address book, and
// log each change.
func (a agent) plan(task string) ([]map[string]any, string, error) {
	var request struct {
		ID         string            `json:"id"`
		NewAddress map[string]string `json:"new_address"`
	}
	var allowed []string
	if err := a.read("/request", &request); err != nil {
		return nil, "", err
	}
	if err := a.read("/carrier_rules/address_change_allowed_statuses", &allowed); err != nil {
		return nil, "", err
	}
	var tests []string
	for _, s := range allowed {
		tests = append(tests, fmt.Sprintf("@.status == '%s'", s))
	}
	text, err := a.call("query_state", map[string]any{"path": "$.orders[?" + strings.Join(tests, " || ") + "]"})
	if err != nil {
		return nil, "", err
	}
	var page struct {
		Matches []struct {
			Pointer string `json:"pointer"`
			Value   struct {
				ID string `json:"id"`
			} `json:"value"`
		} `json:"matches"`
	}
	if err := json.Unmarshal([]byte(text), &page); err != nil {
		return nil, "", err
	}
	entry := map[string]any{"label": "home"}
	for k, v := range request.NewAddress {
		entry[k] = v
	}
	patch := []map[string]any{{"op": "add", "path": "/customer/addresses/-", "value": entry}}
	for _, m := range page.Matches {
		var old string
		if err := a.read(m.Pointer+"/ship_to/postcode", &old); err != nil {
			return nil, "", err
		}
		patch = append(patch,
			map[string]any{"op": "copy", "from": "/request/new_address", "path": m.Pointer + "/ship_to"},
			map[string]any{"op": "add", "path": "/change_log/-", "value": map[string]any{
				"order_id": m.Value.ID, "field": "ship_to", "request_id": request.ID,
				"note": fmt.Sprintf("Redirected from %s to %s (%s) at the customer's request (%s).",
					old, request.NewAddress["postcode"], request.NewAddress["line1"], request.ID)}})
	}
	return patch, "Redirected the orders the carrier still allows to change, added the new address and logged it.", nil
}

func run() error {
	var transport mcp.Transport
	url, token := os.Getenv("PATCHBENCH_MCP_URL"), os.Getenv("PATCHBENCH_MCP_TOKEN")
	switch {
	case len(os.Args) > 1: // the command line of patchbench mcp
		cmd := exec.Command(os.Args[1], os.Args[2:]...)
		cmd.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: cmd}
	case url != "" && token != "":
		transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}
	default:
		return fmt.Errorf("run me as patchbench run --actor mcp:AGENT, or give me patchbench mcp's command line")
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-example", Version: "1"}, nil)
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	defer sess.Close() // over stdio: ends the session, and patchbench mcp records the run and exits
	first, _, _ := strings.Cut(sess.InitializeResult().Instructions, "\n")
	log.Print(first[:min(len(first), 80)]) // names the case
	list, err := sess.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	log.Print("tools: ", strings.Join(names, ", "))
	prompt, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "task"})
	if err != nil {
		return err
	}
	a := agent{ctx: ctx, sess: sess}
	task := prompt.Messages[0].Content.(*mcp.TextContent).Text
	for {
		patch, note, err := a.plan(task)
		if err != nil {
			return err
		}
		result, err := a.call("propose_patch", map[string]any{"patch": patch, "note": note})
		if err != nil {
			return err
		}
		head, _, _ := strings.Cut(result, "\n")
		log.Print(head)
		if !strings.HasPrefix(result, "committed") {
			return fmt.Errorf("not committed: %s", result) // a real agent would try again
		}
		_, next, ok := strings.Cut(result, "\n\nThe next step's task:\n")
		if !ok {
			return nil // "The case is over: every step has run."
		}
		task = next
	}
}

func main() {
	log.SetFlags(0)
	if err := run(); err != nil {
		log.Fatal(err)
	}
}
