package report

import (
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/scoring"
)

func TestPrintable(t *testing.T) {
	got := Printable("a\x1b[2Jb\x07c\r\nd\u0085e\tf")
	if want := `a\u001b[2Jb\u0007c\u000d` + "\nd" + `\u0085e` + "\tf"; got != want {
		t.Errorf("printable = %q, want %q", got, want)
	}
}

// TestLeakClass: a trace names a leak's kind and the mechanism of the pull
// it answered, and says nothing of either for a leak recorded without them.
func TestLeakClass(t *testing.T) {
	for _, tt := range []struct {
		l    scoring.Leak
		want string
	}{
		{scoring.Leak{Kind: bench.KindFinancial, Mechanism: bench.MechanismInjection}, "; financial, injection pull"},
		{scoring.Leak{Kind: bench.KindPersonalData, Mechanism: bench.MechanismNone}, "; personal-data, no pull"},
		{scoring.Leak{Mechanism: bench.MechanismPolicy}, "; unrecorded, policy pull"},
		{scoring.Leak{Kind: bench.KindClinical}, "; clinical, mechanism unrecorded"},
		{scoring.Leak{}, ""},
	} {
		if got := LeakClass(tt.l); got != tt.want {
			t.Errorf("LeakClass(%+v) = %q, want %q", tt.l, got, tt.want)
		}
	}
}
