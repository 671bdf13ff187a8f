package rundir

// crashHook, when a test sets it, is called at the points of Merge and
// Repair where a process killed (kill -9, a power cut) would leave the
// files as they are: a test copies the directory there, and checks that
// the copy reads, or repairs, as the whole operation would have left it.
// It is nil outside tests.
var crashHook func(point string)

// crashPoint calls crashHook, when set, with the point's name.
func crashPoint(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}
