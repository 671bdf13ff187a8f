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
	}
}

// hopper is issue 23's re-forking child: a session of its own, then
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
	os.WriteFile(os.Args[1]+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644)
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

// TestExecActorKillsAReForkingChild runs issue 23's hopper (F4): a child
// in a session of its own that forks and exits every 0.5 ms survived the
// cleanup, which went through /proc once per pass and stopped at the
// first pass that killed nothing (2 runs of 4). Every trial must leave
// nothing.
func TestExecActorKillsAReForkingChild(t *testing.T) {
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
	defer func() {
		// Whatever survived: its groups are stopped, then killed.
		for i := 0; i < 200; i++ {
			left := withToken(token)
			if len(left) == 0 {
				return
			}
			for _, pid := range left {
				if pgrp, _, ok := testStat(pid); ok && pgrp != unix.Getpgrp() {
					syscall.Kill(-pgrp, syscall.SIGSTOP)
					syscall.Kill(-pgrp, syscall.SIGKILL)
				}
				syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	path := script(t, testHelperEnv+"=hopper "+token+" "+strconv.Quote(self)+` </dev/null >/dev/null 2>&1 &
sleep 30`)
	survived := 0
	const trials = 6
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
}

// TestExecActorKillsANonDumpableOrphan runs a program whose child leaves
// its session and makes itself non-dumpable (F5): its environment, and so
// the call's mark, cannot be read by its own user, and it survived when
// patchbench is not root. The subreaper makes it patchbench's child once
// the program dies, an orphan of the call. As root the test runs itself
// again as nobody (uid 65534): root reads every environment.
func TestExecActorKillsANonDumpableOrphan(t *testing.T) {
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
		t.Run(name, func(t *testing.T) {
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
// user nobody, and reports its outcome; without the right to (not root),
// it skips.
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
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody (uid 65534):\n%s", out)
	switch {
	case strings.Contains(string(out), "--- SKIP"):
		t.Skip("skipped as nobody")
	case err != nil:
		t.Errorf("as nobody: %v", err)
	}
}
