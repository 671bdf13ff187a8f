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
