//go:build unix && !linux

package actors

import "os/exec"

// killMarked does nothing outside Linux: there is no /proc to find the
// processes that carry a mark, so only the process group is killed.
func killMarked(string) {}

// adoptOrphans does nothing outside Linux (no PR_SET_CHILD_SUBREAPER).
func adoptOrphans() error { return nil }

// startProgram starts cmd.
func startProgram(cmd *exec.Cmd) error { return cmd.Start() }

// waitProgram waits for cmd.
func waitProgram(cmd *exec.Cmd) error { return cmd.Wait() }

// EndPrograms does nothing outside Linux (no subreaper: no orphans).
func EndPrograms() {}
