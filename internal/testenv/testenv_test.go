package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissingVisible runs a test that calls Missing in a child go test
// process and checks that its line reaches the go command's output
// without -v, and that the require variable turns the skip into a failure.
func TestMissingVisible(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a child process")
	}
	if os.Getenv("TESTENV_CHILD") != "" {
		Missing(t, "TESTENV_REQUIRE", "the widget is not installed", "apt-get install widget")
		return
	}
	if _, err := os.Stat("/proc/self/fd/2"); err != nil {
		t.Skip("no /proc here: the line goes to the test log only")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH")
	}
	run := func(extra ...string) (string, error) {
		cmd := exec.Command(goBin, "test", "-count=1", "-run", "^TestMissingVisible$", ".")
		cmd.Env = append(os.Environ(), append([]string{"TESTENV_CHILD=1"}, extra...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err != nil {
		t.Fatalf("child go test failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "--- SKIP: TestMissingVisible: the widget is not installed (apt-get install widget)") {
		t.Errorf("the skip line is not in go test's output without -v:\n%s", out)
	}
	// Into a regular file the line is not written: the go command would
	// write over it (its descriptor's offset is not ours).
	logFile := t.TempDir() + "/log"
	lf, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "test", "-count=1", "-run", "^TestMissingVisible$", ".")
	cmd.Env = append(os.Environ(), "TESTENV_CHILD=1")
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Run(); err != nil {
		t.Fatalf("child go test into a file failed: %v", err)
	}
	lf.Close()
	b, _ := os.ReadFile(logFile)
	if !strings.HasPrefix(string(b), "ok ") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("go test's output into a file should be its ok line alone, not mangled:\n%q", b)
	}
	out, err = run("TESTENV_REQUIRE=1")
	if err == nil || !strings.Contains(out, "TESTENV_REQUIRE is set") {
		t.Errorf("with the require variable set the child should fail naming it; err=%v\n%s", err, out)
	}
}
