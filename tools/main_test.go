package tools

import (
	"testing"

	"github.com/patchbench/patchbench/internal/testenv"
)

// TestMain runs the tests with the collector of a test process
// (testenv.TuneGC: they allocate much and keep little).
func TestMain(m *testing.M) { testenv.Main(m) }
