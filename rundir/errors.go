package rundir

import (
	"errors"
	"fmt"
	"strings"
)

// The codes of a run directory's errors (an *Error's Code, or the code of
// an error type, named beside each): stable names a test or a caller
// compares instead of a message's text.
const (
	// CodeNotRunDir: the directory holds no manifest (nor its backup, nor
	// runs.jsonl, where Repair is asked).
	CodeNotRunDir = "not_a_run_directory"
	// CodeSettingsDiffer: the directory holds a run with other settings
	// (CheckManifest, Merge), or two directories cannot be read as one
	// comparison (*SettingsError: ReadSet, Combine).
	CodeSettingsDiffer = "settings_differ"
	// CodeOutsideRun: a record of a case, configuration or actor the
	// manifest does not name, or of a round beyond its rounds
	// (*OutsideRunError).
	CodeOutsideRun = "outside_the_run"
	// CodeNotARecord: a line that is not a run record (checkRecord).
	CodeNotARecord = "not_a_run_record"
	// CodeHoldsRuns: Merge's output directory already holds runs.
	CodeHoldsRuns = "holds_runs"
	// CodeGivenTwice: a directory or a shard given twice (ReadSet, Merge).
	CodeGivenTwice = "given_twice"
	// CodeMissingShards: shards of the series missing from a merge
	// (MergeWith without AllowMissing).
	CodeMissingShards = "missing_shards"
	// CodeDamagedLine: a line of runs.jsonl that does not decode (a
	// *LineError whose cause has no code of its own).
	CodeDamagedLine = "damaged_line"
	// CodeLineTooLong: a line of runs.jsonl longer than MaxRecordBytes (a
	// *LineError wrapping ErrLineTooLong).
	CodeLineTooLong = "line_too_long"
	// CodeDamagedManifest: a manifest.json that does not decode or holds
	// a value no run writes (*ManifestError).
	CodeDamagedManifest = "damaged_manifest"
	// CodeWriteFailed: a write to the directory failed (*WriteError).
	CodeWriteFailed = "write_failed"
	// CodeLocked: another process writes to the directory (ErrLocked).
	CodeLocked = "locked"
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

// WriteError is a write to a run directory that failed: the file (an
// atomic write's own file, never its temporary file), the run whose
// record was being appended ("" when a whole file was written), and the
// system's cause (syscall.ENOSPC for a full disk).
type WriteError struct {
	Path  string
	RunID string
	Err   error
}

func (e *WriteError) Error() string {
	if e.RunID != "" {
		return fmt.Sprintf("appending run %s to %s: %v", e.RunID, e.Path, e.Err)
	}
	return fmt.Sprintf("writing %s: %v", e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// OutsideRunError is a record of a run the manifest does not call for
// (code CodeOutsideRun): Member is the record's member the run has no
// such value of ("case", "config", "actor" or "round"), Value its value;
// Rounds is the run's rounds, for a round beyond them.
type OutsideRunError struct {
	RunID, Member, Value string
	Rounds               int
}

func (e *OutsideRunError) Error() string {
	switch e.Member {
	case "case":
		return fmt.Sprintf("run %s: case %s is not in this run's case set", e.RunID, e.Value)
	case "round":
		return fmt.Sprintf("run %s: round %s of a %d-round run", e.RunID, e.Value, e.Rounds)
	case "config":
		return fmt.Sprintf("run %s: configuration %s is not in this run", e.RunID, e.Value)
	}
	return fmt.Sprintf("run %s: %s %s is not in this run", e.RunID, e.Member, e.Value)
}

// SettingsError is two run directories that cannot be read as one
// comparison (code CodeSettingsDiffer): A and B are their paths, Settings
// the SetSettings members that differ or Config the name of a
// configuration they define differently, and Detail says how, A's then
// B's.
type SettingsError struct {
	A, B     string
	Settings []string
	Config   string
	Detail   string
}

func (e *SettingsError) Error() string {
	if e.Config != "" {
		return fmt.Sprintf("%s and %s define configuration %s differently (%s); rename one", e.A, e.B, e.Config, e.Detail)
	}
	return fmt.Sprintf("%s and %s cannot be read as one comparison: %s differ (%s)", e.A, e.B, strings.Join(e.Settings, ", "), e.Detail)
}
