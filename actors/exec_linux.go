//go:build linux

package actors

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// How an exec actor kills, on Linux, what its program started even when it
// left the program's process group (setsid, a double fork):
//
//   - the harness makes itself a child subreaper (PR_SET_CHILD_SUBREAPER,
//     once, when an exec actor first runs a program): a process whose
//     parent dies is then re-parented to patchbench rather than to init,
//     so it can be reaped;
//   - every call's program gets a mark in its environment
//     (PATCHBENCH_EXEC_CALL), which its descendants inherit;
//   - once the program has ended (answered, failed, timed out or been
//     cancelled), every process whose /proc/PID/environ holds the call's
//     mark is killed (SIGKILL), again until none is left (a process that
//     forks while it is killed), for at most execSweepTime; the
//     harness's children that have ended, are not a program an exec
//     actor still waits for and are not of the harness's own process
//     group (every exec program has a group of its own: those are orphans
//     the subreaper adopted; a process that other code started in the
//     harness's group is left for that code to wait for) are reaped.
//
// What this does not find: a descendant that removed the mark from its
// environment (env -i, execve with another environment) and left the
// process group; as the subreaper's child it stays reapable, but it is not
// killed. Processes of another user cannot be read or killed.

// execSweepTime bounds how long killMarked goes on killing.
const execSweepTime = 2 * time.Second

// programs are the exec programs started and not yet waited for, by
// process id: their exit status is os/exec's to collect.
var programs struct {
	sync.Mutex
	pids map[int]bool
}

// startProgram starts cmd and notes it among the programs until
// waitProgram.
func startProgram(cmd *exec.Cmd) error {
	programs.Lock()
	defer programs.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if programs.pids == nil {
		programs.pids = map[int]bool{}
	}
	programs.pids[cmd.Process.Pid] = true
	return nil
}

// waitProgram waits for cmd and forgets it.
func waitProgram(cmd *exec.Cmd) error {
	err := cmd.Wait()
	programs.Lock()
	delete(programs.pids, cmd.Process.Pid)
	programs.Unlock()
	return err
}

// running reports whether pid is a program not yet waited for.
func running(pid int) bool {
	programs.Lock()
	defer programs.Unlock()
	return programs.pids[pid]
}

var subreaper struct {
	once sync.Once
	err  error
}

// adoptOrphans makes the process a child subreaper (once).
func adoptOrphans() error {
	subreaper.once.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return subreaper.err
}

// killMarked kills every process whose environment holds mark (as
// execCallEnv=mark) and reaps those that are the harness's children, until
// none is left or execSweepTime has passed.
func killMarked(mark string) {
	if mark == "" {
		return
	}
	want := []byte(execCallEnv + "=" + mark + "\x00")
	killed := map[int]bool{}
	self, selfGroup := os.Getpid(), unix.Getpgrp()
	deadline := time.Now().Add(execSweepTime)
	for {
		found := false
		for _, pid := range procPIDs() {
			if pid == self {
				continue
			}
			ppid, pgrp, zombie, ok := procStat(pid)
			if !ok {
				continue
			}
			if zombie {
				// Not a process started in this process's own group: those
				// are other code's to wait for.
				if ppid == self && !running(pid) && pgrp != selfGroup {
					// An orphan adopted by the subreaper, ended (killed
					// now, or by itself earlier): reap it.
					var ws unix.WaitStatus
					unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				} else if killed[pid] {
					found = true // its parent reaps it, or dies and hands it over
				}
				continue
			}
			env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
			if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
				continue
			}
			unix.Kill(pid, unix.SIGKILL)
			killed[pid], found = true, true
		}
		if !found || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procPIDs lists the processes in /proc.
func procPIDs() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// procStat reads a process's parent, process group and whether it is a
// zombie from /proc/PID/stat.
func procStat(pid int) (ppid, pgrp int, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return 0, 0, false, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	return ppid, pgrp, string(f[0]) == "Z", err1 == nil && err2 == nil
}
