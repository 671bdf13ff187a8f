//go:build linux

package regularfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// pseudoFSNames are the kernel's pseudo file systems whose files a run
// directory has no business holding, by their statfs(2) f_type.
var pseudoFSNames = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "/proc (procfs)",
	unix.SYSFS_MAGIC:         "/sys (sysfs)",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP2_SUPER_MAGIC: "cgroupfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroupfs",
}

// pseudoFS names the pseudo file system the open file f is on, or "".
func pseudoFS(f *os.File) string {
	rc, err := f.SyscallConn()
	if err != nil {
		return ""
	}
	var st unix.Statfs_t
	if rc.Control(func(fd uintptr) { err = unix.Fstatfs(int(fd), &st) }) != nil || err != nil {
		return ""
	}
	return pseudoFSNames[int64(st.Type)]
}

// pseudoFSAt names the pseudo file system the file at path (after
// symlinks) is on, or "".
func pseudoFSAt(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return ""
	}
	return pseudoFSNames[int64(st.Type)]
}
