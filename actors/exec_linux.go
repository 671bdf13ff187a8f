//go:build linux

package actors

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How an exec actor kills, on Linux, what its program started even when it
// left the program's process group (setsid, a double fork).
//
// Contained (the default, where the kernel allows it): the program is
// started in a PID namespace of its own (CLONE_NEWPID; not root, with a
// user namespace that maps the user to itself, CLONE_NEWUSER), where it
// is process 1. Every process it starts, however it leaves the group or
// session, changes its environment or its dumpability, is in that
// namespace, an orphan among them becomes the program's child, and none
// can see or signal a process outside it; when the program ends (it
// exits, or is killed at the timeout, on Ctrl-C or once it has answered)
// the kernel kills every process in the namespace before the program's
// exit can be waited for (pid_namespaces(7)). The program also gets
// SIGKILL if the harness dies (PR_SET_PDEATHSIG). Nothing is scanned.
// The program sees itself as process 1 and its parent as 0 ($$, getpid);
// /proc is the host's, so /proc/self names its pid there.
//
// Where namespaces are refused (EPERM: a container's seccomp filter,
// user namespaces disabled or restricted, as Ubuntu's AppArmor does;
// checked once, by starting nothing: contained) or turned off
// (PATCHBENCH_EXEC_NAMESPACE=0), the sweep:
//
//   - the harness makes itself a child subreaper (PR_SET_CHILD_SUBREAPER,
//     once, when an exec actor first runs a program): a process whose
//     parent dies is then re-parented to patchbench rather than to init,
//     so it can be reaped, and found (its parent is patchbench): every
//     descendant stays in the harness's subtree, so only that subtree is
//     read (/proc/PID/task/TID/children), not all of /proc;
//   - every call's program gets a mark in its environment
//     (PATCHBENCH_EXEC_CALL), which its descendants inherit;
//   - once the program has ended (answered, failed, timed out or been
//     cancelled), killMarked stops (SIGSTOP) every process of the call it
//     finds (marked, a child of one found, in a group or session of the
//     call's making, or an orphan when no other program runs), with its
//     group at once, reading the subtree until nothing new turns up, then
//     kills them all (SIGKILL); a process that forks and exits at once
//     cannot outrun that: a stopped process does not fork, and a group is
//     stopped whole;
//   - the orphans that no call could claim while another was in flight
//     are killed by EndPrograms when the run ends.
//
// What the sweep does not find: a descendant that removed the mark from
// its environment (env -i, execve with another environment) or made
// itself non-dumpable, left the process group and session (or joined the
// harness's own group), and whose parent still lives and is not one found
// (it is found once its parent dies, as an orphan, unless it is in the
// harness's own group, whose processes other code may have started); an
// orphan of a call while another call is in flight is only killed when no
// program runs, at the latest when the run ends (a concurrent call could
// own it); a process that setsid()s and forks again faster than the
// subtree is read, generation after generation, is only caught when a
// pass meets a generation alive; processes of another user cannot be
// read or killed; a pid reused between the read of /proc/PID/stat and the
// kill would be stopped and killed.

// EnvExecNamespace turns the exec actor's PID namespace off when set to
// 0 (the sweep is used instead): for a program that cannot run as
// process 1 of a namespace.
const EnvExecNamespace = "PATCHBENCH_EXEC_NAMESPACE"

// namespaces is whether programs are started in a PID namespace of their
// own, and with which flags: decided once, by namespaceAttr.
var namespaces struct {
	once sync.Once
	attr *syscall.SysProcAttr // nil: not allowed here, or turned off
	why  error                // why not, when attr is nil
}

// namespaceAttr returns the process attributes that start a program in a
// PID namespace of its own (with a user namespace mapping the user and
// group to themselves when the harness is not root), or nil and why not.
// It asks the kernel once, by starting a process in such namespaces that
// then fails to run a program that does not exist: the namespaces were
// allowed when that fails with ENOENT.
func namespaceAttr() (*syscall.SysProcAttr, error) {
	namespaces.once.Do(func() {
		if os.Getenv(EnvExecNamespace) == "0" {
			namespaces.why = errors.New(EnvExecNamespace + "=0")
			return
		}
		attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
		if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			attr.GidMappingsEnableSetgroups = false
		}
		probe := *attr
		_, err := syscall.ForkExec("/nonexistent/patchbench-namespace-probe", []string{"probe"},
			&syscall.ProcAttr{Env: []string{}, Sys: &probe})
		if !errors.Is(err, syscall.ENOENT) {
			namespaces.why = fmt.Errorf("a PID namespace: %w", err)
			return
		}
		namespaces.attr = attr
	})
	return namespaces.attr, namespaces.why
}

// contain sets cmd to be killed if the harness dies and to start in a
// PID namespace of its own (see above), and reports true; where namespaces are not
// allowed it makes the harness the subreaper of what programs start (for
// killMarked) and reports false, or an error when that too is refused.
func contain(cmd *exec.Cmd) (bool, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	// Killed if the harness dies (kill -9): in a namespace, with all it
	// started; without one, the program alone.
	a.Pdeathsig = syscall.SIGKILL
	if ns, _ := namespaceAttr(); ns != nil {
		a.Cloneflags |= ns.Cloneflags
		a.UidMappings, a.GidMappings = ns.UidMappings, ns.GidMappings
		a.GidMappingsEnableSetgroups = ns.GidMappingsEnableSetgroups
		return true, nil
	}
	if err := adoptOrphans(); err != nil {
		return false, fmt.Errorf("becoming the subreaper of the program's processes (no PID namespace either): %w", err)
	}
	return false, nil
}

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
// its group or session while the others are looked for; the harness's
// subtree (descendants) is read again until two passes in a row find no new one; then every one found,
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

// round stops every process of the call it finds, reading the harness's
// subtree, and the harness's own children more often (a process that
// forks and exits at once is, as an orphan, always one of them, and lives
// too briefly for a pass over the whole subtree to meet it), until two passes in a row
// find no new one (or the deadline); then it kills them all. It reports
// whether it found any.
func (s *sweep) round(deadline time.Time) bool {
	stopped := map[int]bool{}
	for quiet := 0; quiet < 2 && time.Now().Before(deadline); {
		fresh := s.pass(descendants(), stopped)
		for i := 0; i < 10; i++ {
			if s.pass(selfChildren(), stopped) {
				fresh, i = true, 0
			}
		}
		if !fresh && len(stopped) == 0 {
			break // nothing of the call's: one pass is enough
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

// descendants lists the harness's descendants, every process of its
// subtree (read from /proc/PID/task/TID/children, parent by parent): a
// subreaper's descendants stay in its subtree, so this is every process
// a program started, at the cost of the subtree rather than of every
// process on the machine. Where the kernel does not list children
// (CONFIG_PROC_CHILDREN unset) it lists every process in /proc.
func descendants() []int {
	var out []int
	next := selfChildren()
	if next == nil {
		if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children"); err != nil {
			return procPIDs()
		}
	}
	seen := map[int]bool{}
	for len(next) > 0 {
		pid := next[len(next)-1]
		next = next[:len(next)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		next = append(next, childrenOf(pid)...)
	}
	return out
}

// childrenOf lists process pid's children (every thread's).
func childrenOf(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	return readChildren(tasks)
}

// selfChildren lists the harness's children (every thread's), from
// /proc/self/task/TID/children.
func selfChildren() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	return readChildren(tasks)
}

// readChildren reads the process ids in the children files named.
func readChildren(tasks []string) []int {
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
