package runner

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
)

// A record keeps what an actor keeps of an over-long answer, and holds a
// prompt and a usage as the actors package writes them, member for member.
func TestRecordTypesMatchTheActors(t *testing.T) {
	if rundir.KeptBytes != actors.KeptAnswerBytes {
		t.Errorf("rundir keeps %d bytes, actors %d", rundir.KeptBytes, actors.KeptAnswerBytes)
	}
	msgs := []actors.Message{{Role: "system", Content: "s"}, {Role: "assistant", ToolCalls: []actors.ToolCall{{ID: "c1", Name: "read_state", Arguments: `{"pointer":"/a"}`, Oversize: 9}}},
		{Role: "tool", Content: "r", ToolCallID: "c1"}}
	u := actors.Usage{Prompt: 1, Completion: 2, Reasoning: 1, Source: "provider", Invalid: "usage.prompt_tokens: 1.5"}
	for _, tc := range []struct {
		name string
		a, r any
	}{{"messages", msgs, recordMessages(msgs)}, {"usage", u, recordUsage(u)}} {
		a, _ := json.Marshal(tc.a)
		r, _ := json.Marshal(tc.r)
		if diff := cmp.Diff(string(a), string(r)); diff != "" {
			t.Errorf("%s as recorded (-actors +record):\n%s", tc.name, diff)
		}
	}
	if recordMessages(nil) != nil {
		t.Error("a nil prompt is recorded as an empty one")
	}
}
