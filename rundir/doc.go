// Package rundir is the run directory of PatchBench (docs/run.md): what a
// benchmark run leaves on disk and how every command reads it back.
//
// A run directory holds runs.jsonl, one Record per finished run (a run
// retried is recorded again: the last line of a run id is the run);
// manifest.json, the Manifest of the settings that made it, whose Key
// decides whether a second command resumes it (CheckManifest names the
// settings that differ); and summary.json, written by the caller
// (package report builds it).
//
// Writing: OpenSink takes the directory's lock (github.com/gofrs/flock)
// and appends records (a failed write leaves no part of its line); Resume,
// under the lock, repairs a last line cut short by a crash and says which
// runs to skip; WriteManifest writes the manifest and its backup, and
// WriteJSON the summary, atomically (WriteFileAtomic: a temporary file,
// fsync, rename, fsync of the directory). CheckManifest takes a directory
// a run was killed in before its manifest was written as new.
//
// Repairing: a line of runs.jsonl that is not a record of the run is a
// *LineError naming its line and byte offset, a manifest that does not
// decode a *ManifestError naming its line and byte offset; Repair keeps
// every intact record, sets the other lines aside and restores the
// manifest from its backup (or rebuilds it). Both errors' RepairCommand is
// the command their messages point to.
//
// Errors as data: every error a caller may act on has a code (an *Error's
// Code, or its type's: not_a_run_directory, outside_the_run,
// damaged_line, write_failed…) and, where it has parts, a type holding
// them (*LineError, *ManifestError, *OutsideRunError, *SettingsError,
// *WriteError); the messages are built from those parts.
//
// Reading: a Reader streams runs.jsonl one record at a time (for r.Next()
// { r.Record() }; r.Err(), with errors naming the file and line); Latest
// streams the last record of each run; Read opens a directory, checks every
// record against its manifest and streams the runs with Dir.Each, so no
// command holds a directory's records in memory. Merge joins the shard
// directories of one run.
//
// Bounds: every reader refuses a line of runs.jsonl longer than
// MaxRecordBytes (64 MiB) with a *LineError naming its line and byte
// offset, having read no more of it, and a Sink never writes one longer
// than MaxWriteBytes (Record.shrink); a record keeps at most
// MaxRecordedOps operations of a patch and MaxRecordedPointerBytes of a
// pointer (StepRecord.BoundProposal), each cut named in Truncated. A file
// of the directory that is not a regular file (a FIFO, a device) is
// refused with a *NotRegularError, never waited on; a manifest that
// decodes but holds what no run writes is a *ManifestError naming the
// member (Manifest.check).
//
// Several directories: ReadSet reads directories as one comparison (report
// and compare given several, the trace browser), keyed by case,
// configuration, actor and round; Combine names their actors in it (an
// actor whose runs two directories both hold is "actor@DIR" in each) and
// refuses directories whose case sets, prompt templates or pass thresholds
// differ (CheckSettings, naming the difference) or that define a
// configuration differently. An Index is where each run's last line sits
// in runs.jsonl, with the record's head (everything a listing or a summary
// needs, found by a structural scan that skips prompts, responses and
// states), so that one run is then read with a single ReadAt.
package rundir
