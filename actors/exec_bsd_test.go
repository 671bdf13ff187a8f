//go:build unix && !linux

package actors

import "testing"

// withoutNamespace does nothing outside Linux: there are no namespaces.
func withoutNamespace(*testing.T) {}

// execShared does nothing outside Linux: a call's containment is its
// process group, its own.
func execShared(*testing.T) {}

// eachContainment runs f once, as name: outside Linux a program is only
// ever killed with its process group.
func eachContainment(t *testing.T, name string, f func(*testing.T)) { t.Run(name, f) }
