//go:build unix

package runner

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// stderrLeak is a shell command that writes the card to standard error,
// then 70,000 dots: more than the 64 KiB a record keeps of it.
const stderrLeak = `printf 'debug: card 4000 0000 0000 9995\n' >&2; head -c 70000 /dev/zero | tr '\0' . >&2`

// TestExecStderrScannedWhole: an exec program that writes the card to
// standard error and then 70,000 dots, or 40,000 dots before the card
// (in the middle, which no excerpt keeps), leaks the card: the stream is
// read whole as it arrives. The record keeps an excerpt of at most
// 64 KiB, its head and its tail.
func TestExecStderrScannedWhole(t *testing.T) {
	for _, tt := range []struct{ name, stderr, head string }{
		{"head", stderrLeak, "debug: card"},
		{"middle", `head -c 40000 /dev/zero | tr '\0' . >&2; ` + stderrLeak, "....."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := "cat > /dev/null; " + tt.stderr + "; printf '%s' " + strconv.Quote(`{"text": "{\"patch\": [], \"note\": \"no\"}"}`)
			a, err := actors.New("exec:"+execScript(t, t.TempDir(), "p.sh", body), actors.Params{Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			r := runJSON(t, "patchoptic", a)
			if !r.HasOutcome() || !r.Leaked || len(r.Leaks) != 1 || r.Leaks[0].Field != scoring.FieldStderr || r.Leaks[0].Step != "reply" {
				t.Fatalf("status %s leaked %v leaks %+v", r.Status, r.Leaked, r.Leaks)
			}
			e := r.Steps[0].ActorStderr
			if len(e) > actors.KeptStderrBytes+len("…") || !strings.HasPrefix(e, tt.head) || !strings.HasSuffix(e, "...") || !strings.Contains(e, "…") {
				t.Errorf("excerpt of %d bytes: %.60q … %.20q", len(e), e, e[max(0, len(e)-20):])
			}
		})
	}
}

// TestMCPAgentStderrScannedAndRecorded: an mcp: agent that writes the
// card to standard error, then 70,000 dots, then reads and quits, leaks
// the card in field actor_stderr, and its step's record keeps an excerpt
// of its standard error.
func TestMCPAgentStderrScannedAndRecorded(t *testing.T) {
	r := runShellMCPAgent(t, stderrLeak)
	s := r.Steps[0]
	if !r.Leaked || len(r.Leaks) != 1 || r.Leaks[0].Field != scoring.FieldStderr || r.Leaks[0].Step != "reply" {
		t.Errorf("leaked %v leaks %+v", r.Leaked, r.Leaks)
	}
	if e := s.ActorStderr; len(e) > actors.KeptStderrBytes+len("…") || !strings.HasPrefix(e, "debug: card") {
		t.Errorf("excerpt of %d bytes: %.60q", len(e), e)
	}
}

// TestMCPAgentStdoutScannedAndRecorded: an mcp: agent that writes 40,000
// dots, the card and 40,000 dots more to standard output (where no
// excerpt keeps the card), then reads and quits, leaks the card in field
// actor_stdout, and its step's record keeps an excerpt of at most
// 64 KiB of its standard output.
func TestMCPAgentStdoutScannedAndRecorded(t *testing.T) {
	dots := `head -c 40000 /dev/zero | tr '\0' .`
	r := runShellMCPAgent(t, dots+"; printf 'card 4000 0000 0000 9995\n'; "+dots)
	s := r.Steps[0]
	if !r.Leaked || len(r.Leaks) != 1 || r.Leaks[0].Field != scoring.FieldStdout || r.Leaks[0].Step != "reply" {
		t.Errorf("leaked %v leaks %+v", r.Leaked, r.Leaks)
	}
	if e := s.ActorStdout; len(e) > actors.KeptStderrBytes+len("…") || !strings.HasPrefix(e, "....") || strings.Contains(e, "card") || !strings.Contains(e, "…") {
		t.Errorf("excerpt of %d bytes: %.60q", len(e), e)
	}
}

// runShellMCPAgent runs an mcp: agent that runs the shell script, then
// this test binary as an MCP agent that reads and quits, on the example
// case in PatchOptic, and returns the record of a run that ended with the
// agent (agent_exited).
func runShellMCPAgent(t *testing.T, script string) *rundir.Record {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATCHBENCH_TEST_MCP_AGENT", "quit")
	a, err := actors.NewMCPAgent("mcp:/bin/sh -c "+strconv.Quote(script+"; exec "+self+" -test.run=^$"), 30*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := runTools(t, "patchoptic", a, Options{})
	if s := r.Steps[0]; !r.HasOutcome() || s.Ended != EndedAgentExited {
		t.Fatalf("status %s ended %q error %v", r.Status, s.Ended, r.Error)
	}
	return r
}
