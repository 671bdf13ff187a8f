//go:build !unix

package actors

import (
	"os"
	"os/exec"
)

// killGroup leaves the default: cancelling kills the program only.
func killGroup(*exec.Cmd) {}

// killRest does nothing where process groups are not used.
func killRest(*exec.Cmd, string, bool) {}

// contain does nothing where there is neither a PID namespace nor a
// subreaper.
func contain(*exec.Cmd) (bool, error) { return false, nil }

// startProgram starts cmd.
func startProgram(cmd *exec.Cmd) error { return cmd.Start() }

// waitProgram waits for cmd.
func waitProgram(cmd *exec.Cmd) error { return cmd.Wait() }

// EndPrograms does nothing where there is no subreaper.
func EndPrograms() {}

// killedBySignal reports false: no signals here.
func killedBySignal(*os.ProcessState) bool { return false }
