//go:build linux

package runtime

import (
	"syscall"
	"unsafe"
)

// processCPU returns the CPU time the process has used, every thread
// (the collector's included), in nanoseconds: CLOCK_PROCESS_CPUTIME_ID.
func processCPU() (int64, bool) {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 2, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
