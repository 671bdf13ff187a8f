//go:build !linux

package runtime

// processCPU is not measured off Linux.
func processCPU() (int64, bool) { return 0, false }
