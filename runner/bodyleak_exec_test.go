//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// TestExecStdoutLeaks: an exec program's standard output is its output
// whole: the card in a "text" member that a second "text" hides leaks
// (the run is scored on the second), and so does the card written after
// the answer (an answer that is not one JSON value, which would
// otherwise be an error run counting nothing): that run is failed, its
// error kept.
func TestExecStdoutLeaks(t *testing.T) {
	quoted := strings.ReplaceAll(rightProposal, `"`, `\"`)
	quoted = strings.ReplaceAll(quoted, "\n", `\n`)
	for _, tt := range []struct {
		name, stdout string
		error        bool
	}{
		{"duplicate text", `{"text": "card ` + card + `", "text": "` + quoted + `"}`, false},
		{"after the answer", `{"text": "` + quoted + `"}` + "\ncard " + card + "\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			body := "cat > /dev/null; cat \"$DIR/out\""
			if err := os.WriteFile(filepath.Join(dir, "out"), []byte(tt.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := actors.New("exec:"+execScript(t, dir, "p.sh", body), actors.Params{Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			r := runJSON(t, "patchoptic", a)
			checkLeak(t, r, scoring.FieldBody)
			if r.Status != rundir.StatusFailed || (r.Error != nil) != tt.error {
				t.Errorf("status %s, error %v", r.Status, r.Error)
			}
		})
	}
}
