//go:build linux

package actors

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// How an exec actor kills, on Linux, what its program started even when it
// left the program's process group (setsid, a double fork):
//
//   - the harness makes itself a child subreaper (PR_SET_CHILD_SUBREAPER,
//     once, when an exec actor first runs a program): a process whose
//     parent dies is then re-parented to patchbench rather than to init,
//     so it can be reaped, and found (its parent is patchbench);
//   - every call's program gets a mark in its environment
//     (PATCHBENCH_EXEC_CALL), which its descendants inherit;
//   - once the program has ended (answered, failed, timed out or been
//     cancelled), killMarked stops (SIGSTOP) every process of the call it
//     finds (marked, a child of one found, in a group or session of the
//     call's making, or an orphan when no other program runs), with its
//     group at once, scanning until nothing new turns up, then kills them
//     all (SIGKILL); a process that forks and exits at once cannot outrun
//     that: a stopped process does not fork, and a group is stopped whole;
//   - the orphans that no call could claim while another was in flight
//     are killed by EndPrograms when the run ends.
//
// What this does not find: a descendant that removed the mark from its
// environment (env -i, execve with another environment) or made itself
// non-dumpable, left the process group and session, and whose parent
// still lives and is not one found (it is found once its parent dies, as
// an orphan); an orphan of a call while another call is in flight is only
// killed when no program runs, at the latest when the run ends (a
// concurrent call could own it); a process that setsid()s and forks
// again faster than /proc is read, generation after generation, is only
// caught when a pass meets a generation alive (the harness's children
// are read ten times for each pass over /proc for that); processes of
// another user cannot be read or killed; a pid reused between the read
// of /proc/PID/stat and the kill would be stopped and killed.

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
	reaper.Do(func() { go reapOrphans() })
	return nil
}

// reaper starts reapOrphans once.
var reaper sync.Once

// reapOrphans reaps, four times a second, the orphans the subreaper
// adopted that ended while a program still runs: a process that forks and
// exits without end (a fork bomb's slow cousin) would otherwise fill the
// process table with the harness's zombies until its call ends.
func reapOrphans() {
	s := &sweep{self: os.Getpid(), selfGroup: unix.Getpgrp()}
	for range time.Tick(250 * time.Millisecond) {
		s.reapChildren(selfChildren())
	}
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
	on   atomic.Bool
}

// adoptOrphans makes the process a child subreaper (once).
func adoptOrphans() error {
	subreaper.once.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		subreaper.on.Store(subreaper.err == nil)
	})
	return subreaper.err
}

// subreaperOn reports whether adoptOrphans made the process a subreaper:
// only then are its orphans the programs'.
func subreaperOn() bool { return subreaper.on.Load() }

// killMarked stops, then kills, what an ended call of a program left
// running, and reaps the harness's children among them that ended. A
// process is the call's when
//
//   - its environment holds mark (as execCallEnv=mark);
//   - its parent is one of the call's processes (a descendant that
//     dropped the mark, or whose environment cannot be read: one that made
//     itself non-dumpable, prctl(PR_SET_DUMPABLE, 0));
//   - it is in a process group or a session that one of the call's
//     processes is in, other than the harness's own (a session a
//     descendant made with setsid holds only descendants);
//   - or it is an orphan: its parent is the harness (the subreaper
//     adopted it), it is not a program the harness started (exec
//     programs, MCP agents: running), not of the harness's own process
//     group, and no other program is running at that moment (an orphan
//     of a call still in flight could be that call's; those are left for
//     EndPrograms, when the run ends).
//
// Each such process is stopped (SIGSTOP, and its group with kill(-pgrp)
// when the group is the call's), so that it can neither fork nor leave
// its group or session while the others are looked for; /proc is scanned
// again until two passes in a row find no new one; then every one found,
// and every group found, is killed (SIGKILL). The whole is done again
// (the processes a killed one leaves are orphans then) until a round
// finds nothing, for at most execSweepTime.
func killMarked(mark string) {
	if mark == "" {
		return
	}
	want := []byte("\x00" + execCallEnv + "=" + mark + "\x00")
	deadline := time.Now().Add(execSweepTime)
	s := &sweep{want: want, self: os.Getpid(), selfGroup: unix.Getpgrp(), groups: map[int]bool{}, sessions: map[int]bool{}, found: map[int]bool{}}
	s.selfSession, _ = unix.Getsid(0)
	for s.round(deadline) && time.Now().Before(deadline) {
	}
	s.settle(deadline)
}

// EndPrograms kills, when no program is running, the harness's orphans:
// the processes the subreaper adopted that no call could claim while
// another call was in flight (their environment unreadable, their group
// and session their own). The runner calls it when a run of the
// benchmark ends.
func EndPrograms() {
	programs.Lock()
	n := len(programs.pids)
	programs.Unlock()
	if n > 0 || !subreaperOn() {
		return
	}
	s := &sweep{self: os.Getpid(), selfGroup: unix.Getpgrp(), groups: map[int]bool{}, sessions: map[int]bool{}, found: map[int]bool{}}
	s.selfSession, _ = unix.Getsid(0)
	deadline := time.Now().Add(execSweepTime)
	for s.round(deadline) && time.Now().Before(deadline) {
	}
	s.settle(deadline)
}

// sweep is one killMarked's state: what it found.
type sweep struct {
	want                         []byte // "\x00PATCHBENCH_EXEC_CALL=mark\x00"; nil: orphans only
	self, selfGroup, selfSession int
	groups, sessions             map[int]bool // the call's, never the harness's
	found                        map[int]bool // processes stopped
}

// round stops every process of the call it finds, scanning /proc, and
// the harness's own children more often (a process that forks and exits
// at once is, as an orphan, always one of them, and lives too briefly
// for a pass over all of /proc to meet it), until two passes in a row
// find no new one (or the deadline); then it kills them all. It reports
// whether it found any.
func (s *sweep) round(deadline time.Time) bool {
	stopped := map[int]bool{}
	for quiet := 0; quiet < 2 && time.Now().Before(deadline); {
		fresh := s.pass(procPIDs(), stopped)
		for i := 0; i < 10; i++ {
			if s.pass(selfChildren(), stopped) {
				fresh, i = true, 0
			}
		}
		if !fresh && len(stopped) == 0 {
			break // nothing of the call's: one pass over /proc is enough
		}
		if fresh {
			quiet = 0
		} else {
			quiet++
		}
		time.Sleep(time.Millisecond)
	}
	for g := range s.groups {
		unix.Kill(-g, unix.SIGKILL)
	}
	for pid := range stopped {
		unix.Kill(pid, unix.SIGKILL)
	}
	s.reap()
	return len(stopped) > 0
}

// pass stops the call's processes among pids not yet in stopped (the
// newest first: the one a forking process left is the newest); it reports
// whether it stopped a new one.
func (s *sweep) pass(pids []int, stopped map[int]bool) bool {
	fresh := false
	slices.Sort(pids)
	for _, pid := range slices.Backward(pids) {
		if pid == s.self || stopped[pid] {
			continue
		}
		st, ok := procStat(pid)
		if !ok || st.zombie || !s.ours(pid, st, stopped) {
			continue
		}
		unix.Kill(pid, unix.SIGSTOP)
		// Its group, when the group is of the call's making (never the
		// harness's; in the harness's session, only a group this process
		// or another of the call's leads): stopped whole, at once, so that
		// no member forks out of it.
		g := st.pgrp
		if g != s.selfGroup && !s.groups[g] && (st.session != s.selfSession || g == pid || stopped[g]) {
			s.groups[g] = true
			unix.Kill(-g, unix.SIGSTOP)
		}
		if st.session != s.selfSession && st.session > 0 {
			s.sessions[st.session] = true
		}
		stopped[pid], s.found[pid], fresh = true, true, true
	}
	return fresh
}

// selfChildren lists the harness's children (every thread's), from
// /proc/self/task/TID/children.
func selfChildren() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(w)); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// ours says whether process pid (its stat st) belongs to the call.
func (s *sweep) ours(pid int, st procStatus, stopped map[int]bool) bool {
	if stopped[st.ppid] || s.groups[st.pgrp] || s.sessions[st.session] {
		return true
	}
	if st.ppid == s.self && st.pgrp != s.selfGroup && s.orphan(pid) {
		return true
	}
	if s.want == nil {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && bytes.Contains(append([]byte{0}, env...), s.want)
}

// orphan says whether the harness's child pid (not of its own group:
// those other code started) is an orphan no running program can own: it
// is not a program, and no program is running (a program started after
// this check has no orphan yet: its processes are its children).
func (s *sweep) orphan(pid int) bool {
	if !subreaperOn() {
		return false
	}
	programs.Lock()
	defer programs.Unlock()
	return len(programs.pids) == 0
}

// settle reaps the processes killed as they end, until none of them is
// left (or the deadline).
func (s *sweep) settle(deadline time.Time) {
	for {
		s.reap()
		left := false
		for pid := range s.found {
			if st, ok := procStat(pid); ok && (!st.zombie || st.ppid == s.self) {
				left = true
				break
			}
		}
		if !left || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// reap waits for the harness's children (only a parent can) that ended
// and that no one else waits for: orphans the subreaper adopted (not a program os/exec waits
// for, not of the harness's own process group, whose children other code
// started and waits for).
func (s *sweep) reap() { s.reapChildren(selfChildren()) }

// reapChildren is reap among pids.
func (s *sweep) reapChildren(pids []int) {
	for _, pid := range pids {
		st, ok := procStat(pid)
		if !ok || !st.zombie || st.ppid != s.self || st.pgrp == s.selfGroup || running(pid) {
			continue
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil)
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

// procStatus is what procStat reads of a process.
type procStatus struct {
	ppid, pgrp, session int
	zombie              bool
}

// procStat reads a process's parent, process group, session and whether
// it is a zombie from /proc/PID/stat (readable for any process).
func procStat(pid int) (procStatus, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStatus{}, false
	}
	// pid (comm) state ppid pgrp session ...; comm may hold spaces and
	// parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStatus{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return procStatus{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	sid, err3 := strconv.Atoi(string(f[3]))
	st := procStatus{ppid: ppid, pgrp: pgrp, session: sid, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}
	return st, err1 == nil && err2 == nil && err3 == nil
}
