//go:build !linux

package regularfile

import "os"

// pseudoFS reports "" outside Linux: no pseudo file system is known.
func pseudoFS(*os.File) string { return "" }

// pseudoFSAt reports "" outside Linux.
func pseudoFSAt(string) string { return "" }
