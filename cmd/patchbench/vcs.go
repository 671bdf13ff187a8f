package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/patchbench/patchbench/internal/regularfile"
)

// checkoutRevision returns the commit the git checkout of module is at,
// and the module's root directory: the nearest directory at or above dir
// whose go.mod declares module, and the nearest .git at or above it, read
// as git resolves HEAD (without running git): .git is a directory, or a
// file "gitdir: PATH" (a worktree, whose commondir file names the
// directory that holds the refs); HEAD holds a commit or "ref: NAME"; a
// ref is a file under the git directory or the common directory, or a
// line of packed-refs. Anything else (no checkout, another module, a
// branch without a commit, a HEAD that names none) gives "". Each file is
// read only when regular and small (regularfile.Read: go.mod 1 MiB, refs
// 64 KiB, packed-refs 64 MiB); a FIFO, a device or a file of /proc reads
// as missing (a /dev/zero packed-refs took every run out of memory, a
// FIFO HEAD hung it).
func checkoutRevision(dir, module string) (revision, root string) {
	root = dir
	for {
		if b, err := regularfile.Read(filepath.Join(root, "go.mod"), 1<<20); err == nil {
			if goModModule(b) != module {
				return "", ""
			}
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", ""
		}
		root = parent
	}
	gitDir := ""
	for at := root; ; {
		p := filepath.Join(at, ".git")
		if fi, err := os.Stat(p); err == nil {
			gitDir = p
			if !fi.IsDir() {
				b, err := regularfile.Read(p, 64<<10)
				line := strings.TrimSpace(string(b))
				if err != nil || !strings.HasPrefix(line, "gitdir:") {
					return "", ""
				}
				gitDir = strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(at, gitDir)
				}
			}
			break
		}
		parent := filepath.Dir(at)
		if parent == at {
			return "", ""
		}
		at = parent
	}
	common := gitDir
	if b, err := regularfile.Read(filepath.Join(gitDir, "commondir"), 64<<10); err == nil {
		common = strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	ref := "HEAD"
	for range 10 { // symbolic refs, at most this deep
		text, ok := readRef(gitDir, common, ref)
		if !ok {
			return "", ""
		}
		if name, sym := strings.CutPrefix(text, "ref:"); sym {
			ref = strings.TrimSpace(name)
			continue
		}
		if !isCommitID(text) {
			return "", ""
		}
		return text, root
	}
	return "", ""
}

// goModModule is the module path a go.mod declares: its module directive,
// quoted or not, "" when there is none.
func goModModule(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`")
		}
	}
	return ""
}

// readRef reads a ref: its own file in the git directory (HEAD, a
// worktree's own refs) or the common directory, else its line in the
// common directory's packed-refs.
func readRef(gitDir, common, ref string) (string, bool) {
	if strings.Contains(ref, "..") {
		return "", false
	}
	for _, d := range []string{gitDir, common} {
		if b, err := regularfile.Read(filepath.Join(d, filepath.FromSlash(ref)), 64<<10); err == nil {
			return strings.TrimSpace(string(b)), true
		}
	}
	b, err := regularfile.Read(filepath.Join(common, "packed-refs"), 64<<20)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if id, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref && !strings.HasPrefix(id, "#") && !strings.HasPrefix(id, "^") {
			return id, true
		}
	}
	return "", false
}

// isCommitID reports whether s is a full commit id: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits.
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
