package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestChoiceFlags checks that every flag with a fixed list of values
// refuses another value with the same message, naming the list.
func TestChoiceFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cases", "--format", "xml"}, `--format must be text or json, not "xml"`},
		{[]string{"footprint", "--format", "xml"}, `--format must be text or json, not "xml"`},
		{[]string{"stress", "--format", "yaml"}, `--format must be text or json, not "yaml"`},
		{[]string{"version", "--format", "yaml"}, `--format must be text or json, not "yaml"`},
		{[]string{"show", "x/y/z/1", "--format", "html"}, `--format must be text or json, not "html"`},
		{[]string{"pending", t.TempDir(), "--view", "half"}, `--view must be full or projected, not "half"`},
		{[]string{"report", t.TempDir(), "--plot-size", "a4"}, `--plot-size must be one-column or two-column, not "a4"`},
		{[]string{"report", t.TempDir(), "--format", "yaml"}, `--format must be text, markdown, csv, latex, json or html, not "yaml"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

func TestOrList(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a b": "a or b", "a b c": "a, b or c"} {
		if got := orList(strings.Fields(in)); got != want {
			t.Errorf("orList(%q) = %q, want %q", in, got, want)
		}
	}
}
