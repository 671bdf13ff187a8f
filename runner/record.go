package runner

import (
	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
)

// recordUsage is an actor's usage as a run record holds it. The two types
// have the same members, so a member added to one and not the other stops
// this conversion from compiling.
func recordUsage(u actors.Usage) rundir.Usage { return rundir.Usage(u) }

// recordMessages is a prompt as a run record holds it (nil stays nil).
func recordMessages(msgs []actors.Message) []rundir.Message {
	if msgs == nil {
		return nil
	}
	out := make([]rundir.Message, len(msgs))
	for i, m := range msgs {
		out[i] = rundir.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, rundir.MessageCall(c))
		}
	}
	return out
}
