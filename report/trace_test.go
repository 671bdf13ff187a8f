package report

import "testing"

func TestPrintable(t *testing.T) {
	got := Printable("a\x1b[2Jb\x07c\r\nd\u0085e\tf")
	if want := `a\u001b[2Jb\u0007c\u000d` + "\nd" + `\u0085e` + "\tf"; got != want {
		t.Errorf("printable = %q, want %q", got, want)
	}
}
