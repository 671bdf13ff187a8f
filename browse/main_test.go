package browse

import (
	"os"
	"testing"

	"github.com/patchbench/patchbench/internal/testenv"
)

// TestMain runs the tests with the collector of a test process
// (testenv.TuneGC: they allocate much and keep little), then stops the
// Chromium they shared, if one started.
func TestMain(m *testing.M) {
	testenv.TuneGC()
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}
