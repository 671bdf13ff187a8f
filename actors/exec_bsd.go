//go:build unix && !linux

package actors

import "os/exec"

// killMarked does nothing outside Linux: there is no /proc to find the
// processes that carry a mark, so only the process group is killed.
func killMarked(string) {}

// contain does nothing outside Linux (neither PID namespaces nor
// PR_SET_CHILD_SUBREAPER): only the program's process group is killed.
func contain(*exec.Cmd) (bool, error) { return false, nil }

// startProgram starts cmd.
func startProgram(cmd *exec.Cmd) error { return cmd.Start() }

// waitProgram waits for cmd.
func waitProgram(cmd *exec.Cmd) error { return cmd.Wait() }

// EndPrograms does nothing outside Linux (no subreaper: no orphans).
func EndPrograms() {}
