//go:build unix

package actors

import (
	"os/exec"
	"syscall"
)

// killGroup runs the program in a process group of its own and makes
// cancelling it kill the whole group, so that what the program started
// (an interpreter's children, a shell pipeline) dies with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killRest kills what is left of the program's process group once the
// program has ended (a child it started in the background); a group
// already gone is no error.
func killRest(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
