package rundir

import (
	"errors"
	"fmt"
)

// The codes of a run directory's errors (Error.Code): stable names a test
// or a caller compares instead of a message's text.
const (
	// CodeNotRunDir: the directory holds no manifest (nor its backup, nor
	// runs.jsonl, where Repair is asked).
	CodeNotRunDir = "not_a_run_directory"
	// CodeSettingsDiffer: the directory holds a run with other settings
	// (CheckManifest, Merge).
	CodeSettingsDiffer = "settings_differ"
	// CodeOutsideRun: a record of a case, configuration or actor the
	// manifest does not name.
	CodeOutsideRun = "outside_the_run"
	// CodeNotARecord: a line that is not a run record (checkRecord).
	CodeNotARecord = "not_a_run_record"
	// CodeHoldsRuns: Merge's output directory already holds runs.
	CodeHoldsRuns = "holds_runs"
	// CodeGivenTwice: a directory or a shard given twice (ReadSet, Merge).
	CodeGivenTwice = "given_twice"
)

// Error is an error of the run directory with a stable Code; its message
// is as it was before codes (what the commands print).
type Error struct {
	Code string
	msg  string
	err  error
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the cause, when the message wrapped one (%w).
func (e *Error) Unwrap() error { return e.err }

// errorf makes an *Error of code with fmt.Errorf's message and cause.
func errorf(code, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &Error{Code: code, msg: err.Error(), err: errors.Unwrap(err)}
}

// CodeOf returns the code of the first *Error in err's chain (through a
// LineError too), or "" when there is none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
