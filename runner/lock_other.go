//go:build !unix

package runner

import "os"

// lock is a no-op where advisory locks are not available: do not run two
// processes on one run directory there.
func lock(*os.File) error { return nil }
