//go:build unix

package actors

import (
	"os"
	"os/exec"
	"syscall"
)

// killGroup runs the program in a session, and so a process group, of
// its own and makes cancelling it kill the whole group, so that what the
// program started (an interpreter's children, a shell pipeline) dies with
// it. A session of its own has no controlling terminal: the program
// cannot open /dev/tty, take the terminal's foreground (tcsetpgrp) and
// so stop patchbench at its next write there (SIGTTOU) or keep Ctrl-C
// from reaching it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killRest kills what is left of the program once it has ended: its
// process group (a child it started in the background; a group already
// gone is no error) and, unless the program ran contained (in a PID
// namespace of its own, where the kernel killed everything in it when the
// program ended), the processes killMarked finds to be the call's (Linux:
// a child that called setsid).
func killRest(cmd *exec.Cmd, mark string, contained bool) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if !contained {
		killMarked(mark)
	}
}

// killedBySignal reports whether the program was ended by SIGKILL.
func killedBySignal(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
