//go:build linux

package actors

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// testHelperEnv makes the test binary, started with it, one of the
// helper programs below instead of running the tests.
const testHelperEnv = "PATCHBENCH_TEST_HELPER"

func init() {
	switch os.Getenv(testHelperEnv) {
	case "hopper":
		hopper()
	case "nondumpable":
		nonDumpable()
	case "joiner":
		joiner()
	case "harness":
		harness()
	}
}

// harness is a harness that runs one exec call of the program os.Args[1]
// names, without a PID namespace when PATCHBENCH_EXEC_NAMESPACE=0, until
// it is killed.
func harness() {
	a, err := NewExec("exec:"+os.Args[1], time.Minute)
	if err != nil {
		os.Exit(3)
	}
	a.Propose(context.Background(), execReq())
	os.Exit(0)
}

// hostPIDOf is the process's id as the harness sees it (/proc is the
// host's, even inside the PID namespace a program runs in).
func hostPIDOf() int {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return os.Getpid()
	}
	pid, err := strconv.Atoi(s)
	if err != nil {
		return os.Getpid()
	}
	return pid
}

// joiner is the escaping child of
// TestExecActorKillsWhatJoinedTheHarnessGroup: started with no mark in
// its environment (env -i), it moves into the harness's own
// process group (os.Args[1]: setpgid is allowed within its session),
// writes its id to the file os.Args[3] names and then, as os.Args[2]
// says, sleeps ("sleep") or forks and exits without end ("hop"), every
// generation in the harness's group.
func joiner() {
	pgrp, _ := strconv.Atoi(os.Args[1])
	joined := syscall.Setpgid(0, pgrp) == nil
	os.WriteFile(os.Args[3]+".tmp", []byte(strconv.Itoa(hostPIDOf())), 0o644)
	os.Rename(os.Args[3]+".tmp", os.Args[3])
	if !joined {
		os.WriteFile(os.Args[3]+".refused", nil, 0o644)
	}
	if os.Args[2] == "hop" {
		runtime.LockOSThread()
		all := ^uint64(0)
		syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 0 /* SIG_BLOCK */, uintptr(unsafe.Pointer(&all)), 0, 8, 0, 0)
		ts := syscall.Timespec{Nsec: 500_000}
		hop(&ts)
	}
	time.Sleep(300 * time.Second)
	os.Exit(0)
}

// withoutNamespace runs the rest of the test with programs started
// outside a PID namespace, as where the kernel refuses one: the sweep
// (killMarked) must then find what they leave.
func withoutNamespace(t *testing.T) {
	namespaceAttr()
	saved := namespaces.attr
	namespaces.attr = nil
	t.Cleanup(func() { namespaces.attr = saved })
}

// containment lets the exec tests that run in parallel (t.Parallel)
// share the package's containment: calls in PID namespaces of their own
// run at once (each holds it shared), while a call in the sweep holds it
// alone, since the sweep variant changes namespaces.attr for every call
// of the process, and the sweep claims an orphan only while no other
// program runs.
var containment sync.RWMutex

// execShared holds containment for the rest of the test, in the
// containment programs get here: shared in the namespace, alone in the
// sweep (where the kernel refuses namespaces).
func execShared(t *testing.T) {
	if _, noNamespace := namespaceAttr(); noNamespace != nil {
		containment.Lock()
		t.Cleanup(containment.Unlock)
		return
	}
	containment.RLock()
	t.Cleanup(containment.RUnlock)
}

// eachContainment runs f as name/namespace (skipped, with the kernel's
// reason, where a PID namespace is refused) and as name/sweep (without
// one), each holding containment (shared in the namespace, alone in the
// sweep). Under -short it runs only the one programs run in here: the
// namespace where the kernel grants it, else the sweep.
func eachContainment(t *testing.T, name string, f func(*testing.T)) {
	_, noNamespace := namespaceAttr()
	t.Run(name+"/namespace", func(t *testing.T) {
		if noNamespace != nil {
			t.Skipf("programs do not run in a PID namespace here: %v", noNamespace)
		}
		containment.RLock()
		t.Cleanup(containment.RUnlock)
		f(t)
	})
	t.Run(name+"/sweep", func(t *testing.T) {
		if testing.Short() && noNamespace == nil {
			t.Skip("under -short, only the containment programs run in here (the namespace)")
		}
		// Cleanups run last first: the containment is restored, then
		// released.
		containment.Lock()
		t.Cleanup(containment.Unlock)
		withoutNamespace(t)
		f(t)
	})
}

// hopper is a re-forking child: a session of its own, then
// forever fork, the parent exits, the child waits 0.5 ms and does the
// same, so that the process alive is never the one seen a moment before.
// After the fork only raw system calls run (the child has one thread).
func hopper() {
	syscall.Setsid()
	runtime.LockOSThread()
	all := ^uint64(0)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 0 /* SIG_BLOCK */, uintptr(unsafe.Pointer(&all)), 0, 8, 0, 0)
	ts := syscall.Timespec{Nsec: 500_000}
	hop(&ts)
}

//go:nosplit
func hop(ts *syscall.Timespec) {
	for {
		pid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
		switch {
		case errno != 0:
		case pid != 0:
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(ts)), 0, 0)
	}
}

// nonDumpable is a child that leaves the program's session and makes
// itself non-dumpable, as ssh-agent does (its /proc/PID/environ is then
// unreadable to its own user), writes its pid to the file os.Args[1]
// names, and sleeps.
func nonDumpable() {
	syscall.Setsid()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		os.Exit(3)
	}
	os.WriteFile(os.Args[1]+".tmp", []byte(strconv.Itoa(hostPIDOf())), 0o644)
	os.Rename(os.Args[1]+".tmp", os.Args[1])
	time.Sleep(300 * time.Second)
	os.Exit(0)
}

// withToken lists the processes whose environment holds token.
func withToken(token string) []int {
	var out []int
	for _, pid := range procPIDs() {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(env, []byte(token)) {
			if _, zombie, ok := testStat(pid); ok && !zombie {
				out = append(out, pid)
			}
		}
	}
	return out
}

// testStat reads a process's group and whether it is a zombie.
func testStat(pid int) (pgrp int, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 3 {
		return 0, false, false
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	return pgrp, string(f[0]) == "Z", err == nil
}

// TestExecActorKillsAReForkingChild runs the hopper: a child
// in a session of its own that forks and exits every 0.5 ms survived the
// cleanup, which went through /proc once per pass and stopped at the
// first pass that killed nothing (2 runs of 4). Every trial must leave
// nothing.
func TestExecActorKillsAReForkingChild(t *testing.T) {
	if testing.Short() {
		t.Skip("waits on a timeout")
	}
	// Mostly waiting on its trials' timeouts: in parallel with the other
	// parallel tests, each call holding the containment (containment) its
	// sweep subtest changes.
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: only the process group is killed here")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	token := "PATCHBENCH_TEST_TOKEN=" + hex.EncodeToString(b)
	defer killLeft(token) // whatever survived: its groups stopped, then killed
	path := script(t, testHelperEnv+"=hopper "+token+" "+strconv.Quote(self)+` </dev/null >/dev/null 2>&1 &
sleep 30`)
	eachContainment(t, "re-forking", func(t *testing.T) {
		survived := 0
		trials := 6
		if testing.Short() {
			trials = 2 // the inner loop; the full run tries six times
		}
		for trial := 0; trial < trials; trial++ {
			a, err := NewExec("exec:"+path, 500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			a.Propose(context.Background(), execReq())
			t.Logf("trial %d: the call took %v", trial+1, time.Since(start).Round(time.Millisecond))
			time.Sleep(100 * time.Millisecond)
			if left := withToken(token); len(left) > 0 {
				survived++
				for _, pid := range left {
					if pgrp, _, ok := testStat(pid); ok && pgrp != unix.Getpgrp() {
						syscall.Kill(-pgrp, syscall.SIGSTOP)
						syscall.Kill(-pgrp, syscall.SIGKILL)
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		if survived > 0 {
			t.Errorf("the re-forking child survived %d trials of %d", survived, trials)
		}
	})
}

// TestExecActorKillsANonDumpableOrphan runs a program whose child leaves
// its session and makes itself non-dumpable: its environment, and so
// the call's mark, cannot be read by its own user, and it survived when
// patchbench is not root. The subreaper makes it patchbench's child once
// the program dies, an orphan of the call. As root the test runs itself
// again as nobody (uid 65534): root reads every environment.
func TestExecActorKillsANonDumpableOrphan(t *testing.T) {
	if testing.Short() {
		t.Skip("waits on a timeout")
	}
	// Mostly waiting on its timeouts: in parallel with the other exec
	// tests that wait, each call holding the containment (eachContainment).
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: only the process group is killed here")
	}
	if os.Getuid() == 0 {
		asNobody(t, "TestExecActorKillsANonDumpableOrphan")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"timed out": `sleep 300`,
		"answered":  `printf '{"text": "{\\"patch\\": []}"}\n'`,
	} {
		eachContainment(t, name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			path := script(t, `cat >/dev/null
`+testHelperEnv+"=nondumpable "+strconv.Quote(self)+" "+strconv.Quote(pidFile)+` </dev/null >/dev/null 2>&1 &
while [ ! -s `+strconv.Quote(pidFile)+` ]; do sleep 0.01; done
`+body)
			a, err := NewExec("exec:"+path, 1500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			a.Propose(context.Background(), execReq())
			b, _ := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(string(b))
			if _, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil {
				if _, zombie, ok := testStat(pid); ok && !zombie {
					t.Log("the child's environment is readable: the test does not test the orphan rule")
				}
			}
			assertDead(t, pidFile)
		})
	}
}

// asNobody runs the test named again, in a copy of the test binary, as
// user nobody (under -short too when the test runs under it), and
// reports its outcome; without the right to (not root), it skips.
func asNobody(t *testing.T, name string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "patchbench-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "actors.test")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		dst.Close()
	}
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"-test.run=^" + name + "$", "-test.v", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short") // the containments -short runs, as here
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody (uid 65534):\n%s", out)
	switch {
	case strings.Contains("\n"+string(out), "\n--- SKIP: "+name+" ("): // the test, not one of its subtests
		t.Skip("skipped as nobody")
	case err != nil:
		t.Errorf("as nobody: %v", err)
	}
}

// TestExecActorKillsWhatJoinedTheHarnessGroup runs a program whose
// child, with no mark in its environment (env -i),
// moves into patchbench's own process group (allowed within its session)
// and, once the program has answered and exited, sleeps, or forks and
// exits without end. The sweep cannot tell such a process from those
// other code starts in the harness's group: both outlived the run, and
// the fork loop left the harness's zombies. In a PID namespace the
// harness's group is not even visible to the child, and whatever it
// became dies with the program.
func TestExecActorKillsWhatJoinedTheHarnessGroup(t *testing.T) {
	if _, why := namespaceAttr(); why != nil {
		t.Skipf("programs do not run in a PID namespace here (%v): the sweep does not find this one (docs/actors.md)", why)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"sleep", "hop"} {
		t.Run(mode, func(t *testing.T) {
			b := make([]byte, 8)
			rand.Read(b)
			token := "PATCHBENCH_TEST_TOKEN=" + hex.EncodeToString(b)
			defer killLeft(token)
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "child.pid")
			path := script(t, `cat >/dev/null
env -i `+token+" "+testHelperEnv+"=joiner "+strconv.Quote(self)+" "+strconv.Itoa(unix.Getpgrp())+" "+mode+" "+strconv.Quote(pidFile)+` </dev/null >/dev/null 2>&1 &
while [ ! -s `+strconv.Quote(pidFile)+` ]; do sleep 0.01; done
printf '{"text": "{\\"patch\\": []}"}\n'`)
			a, err := NewExec("exec:"+path, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if resp, err := a.Propose(context.Background(), execReq()); err != nil || resp.Raw != `{"patch": []}` {
				t.Fatalf("answer %q, error %v", resp.Raw, err)
			}
			if _, err := os.Stat(pidFile + ".refused"); err == nil {
				t.Log("the child could not join the harness's group (it cannot see it from its namespace)")
			}
			time.Sleep(200 * time.Millisecond)
			if left := withToken(token); len(left) > 0 {
				t.Errorf("%d processes of the call outlived it: %v", len(left), left)
			}
			if z := zombieChildren(); len(z) > 0 {
				t.Errorf("the harness holds %d zombies: %v", len(z), z)
			}
		})
	}
}

// killLeft stops and kills the processes whose environment holds token,
// with their groups unless the group is the test's own, until none is
// left (or 1 s).
func killLeft(token string) {
	for i := 0; i < 200; i++ {
		left := withToken(token)
		if len(left) == 0 {
			break
		}
		for _, pid := range left {
			if pgrp, _, ok := testStat(pid); ok && pgrp != unix.Getpgrp() {
				syscall.Kill(-pgrp, syscall.SIGSTOP)
				syscall.Kill(-pgrp, syscall.SIGKILL)
			}
			syscall.Kill(pid, syscall.SIGSTOP)
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, pid := range zombieChildren() {
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

// zombieChildren lists the test process's children that have ended and
// not been waited for.
func zombieChildren() []int {
	var out []int
	for _, pid := range selfChildren() {
		if _, zombie, ok := testStat(pid); ok && zombie {
			out = append(out, pid)
		}
	}
	return out
}

// TestExecActorRunsInANamespace checks that a program runs as process 1
// of a PID namespace of its own where the kernel allows one, and that
// PATCHBENCH_EXEC_NAMESPACE=0 (or a refusal) leaves it in the harness's.
func TestExecActorRunsInANamespace(t *testing.T) {
	path := script(t, `cat >/dev/null
echo $$ > "$DIR/pid"
printf '{"text": "{\\"patch\\": []}"}\n'`)
	pidIn := func(t *testing.T) string {
		a, err := NewExec("exec:"+path, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Propose(context.Background(), execReq()); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "pid"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	eachContainment(t, "pid", func(t *testing.T) {
		got := pidIn(t)
		if namespaces.attr != nil {
			if got != "1" {
				t.Errorf("$$ = %s in the program, want 1 (process 1 of its namespace)", got)
			}
		} else if got == "1" {
			t.Errorf("$$ = 1 without a namespace")
		}
	})
}

// BenchmarkExecCall times one exec call of a program that answers at
// once, in a PID namespace (nothing scanned when it ends) and without one
// (the sweep reads the harness's subtree). scripts/bench-exec-cleanup.sh
// runs it beside thousands of unrelated processes, which a pass over all
// of /proc used to read.
func BenchmarkExecCall(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\ncat >/dev/null\nprintf '{\"text\": \"{}\"}\\n'\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"namespace", "sweep"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "sweep" {
				namespaceAttr()
				saved := namespaces.attr
				namespaces.attr = nil
				defer func() { namespaces.attr = saved }()
			} else if _, why := namespaceAttr(); why != nil {
				b.Skipf("no PID namespace here: %v", why)
			}
			a, err := NewExec("exec:"+path, 10*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := a.Propose(context.Background(), execReq()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestExecActorHasNoTerminal checks that a program runs in a session of
// its own (so without a controlling terminal): in patchbench's session it
// could open /dev/tty, make its group the terminal's foreground and stop
// patchbench at its next progress line.
func TestExecActorHasNoTerminal(t *testing.T) {
	path := script(t, `cat >/dev/null
read -r _ _ _ _ _ sid _ </proc/self/stat
echo "$sid" > "$DIR/sid"
if (: </dev/tty) 2>/dev/null; then echo yes; else echo no; fi > "$DIR/tty"
printf '{"text": "{}"}\n'`)
	self, _ := unix.Getsid(0)
	eachContainment(t, "session", func(t *testing.T) {
		a, err := NewExec("exec:"+path, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Propose(context.Background(), execReq()); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "sid"))
		if sid, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || sid == self {
			t.Errorf("the program's session is %q, patchbench's %d: want one of its own", b, self)
		}
		if b, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "tty")); strings.TrimSpace(string(b)) != "no" {
			t.Errorf("the program opened /dev/tty: %q", b)
		}
	})
}

// TestExecProgramDiesWithTheHarness kills (SIGKILL) a harness while its
// exec program runs: the program must die with it, with or without the
// PID namespace; without it, the program outlived patchbench.
func TestExecProgramDiesWithTheHarness(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"1", "0"} {
		t.Run("namespace="+ns, func(t *testing.T) {
			path := script(t, hostPID+` > "$DIR/child.pid.tmp"; mv "$DIR/child.pid.tmp" "$DIR/child.pid"
exec sleep 300`)
			cmd := exec.Command(self)
			cmd.Args = []string{self, path}
			cmd.Env = append(os.Environ(), testHelperEnv+"=harness", EnvExecNamespace+"="+ns)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(filepath.Dir(path), "child.pid")
			for i := 0; i < 500; i++ {
				if fi, err := os.Stat(pidFile); err == nil && fi.Size() > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Kill()
			cmd.Wait()
			assertDead(t, pidFile)
		})
	}
}
