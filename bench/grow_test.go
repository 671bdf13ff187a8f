package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

func TestParseScale(t *testing.T) {
	for in, want := range map[string]int64{"1x": 0, "1X": 0, "1MB": 1e6, "10mb": 1e7, "500KB": 5e5, "1.5MB": 15e5, "1GB": 1e9, "2500B": 2500} {
		s, err := ParseScale(in)
		if err != nil || s.Bytes != want {
			t.Errorf("ParseScale(%q) = %d, %v; want %d", in, s.Bytes, err, want)
			continue
		}
		if back, err := ParseScale(s.String()); err != nil || back != s {
			t.Errorf("ParseScale(%q).String() = %q reads back as %v, %v", in, s, back, err)
		}
	}
	for _, bad := range []string{"", "2x", "10", "-1MB", "0MB", "2GB", "ten MB", "1TB"} {
		if _, err := ParseScale(bad); err == nil {
			t.Errorf("ParseScale(%q) took it", bad)
		}
	}
}

// embeddedCase is one case of the embedded suite.
func embeddedCase(t testing.TB, id string) *Case {
	t.Helper()
	cases, problems, err := LoadEmbeddedCases()
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %v", err, problems)
	}
	for _, c := range cases {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %s", id)
	return nil
}

// TestGrown: a case grown to 1 MB is about that size, the same bytes on
// every run (a digest pinned here: the generator's output on every
// machine), its hand-authored records where they were, its generated
// secrets registered, distinct and at their paths, and its reference
// still passes every gate without repeating a generated secret.
func TestGrown(t *testing.T) {
	c := embeddedCase(t, "mkt-crm-segment-export")
	scale, _ := ParseScale("1MB")
	g, err := c.Grown(scale, DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	n := len(g.State.Bytes())
	if n < 1e6 || n > 1e6+2000 {
		t.Errorf("grown to %d bytes, want about 1000000", n)
	}
	again, err := c.Grown(scale, DefaultScaleSeed)
	if err != nil || string(again.State.Bytes()) != string(g.State.Bytes()) {
		t.Fatal("two growths of one case, scale and seed differ")
	}
	sum := sha256.Sum256(g.State.Bytes())
	const pinned = "ea3519736d321de567159a20181379dfe3676ea368d20e1d356a0a5339296cad"
	if got := hex.EncodeToString(sum[:]); got != pinned {
		t.Errorf("the grown state's SHA-256 is %s, pinned %s: the generator's output changed (a change to it must change the pin, and is a new benchmark)", got, pinned)
	}
	other, err := c.Grown(scale, DefaultScaleSeed+1)
	if err != nil || string(other.State.Bytes()) == string(g.State.Bytes()) {
		t.Error("another scale seed grew the same state")
	}
	if c.State.Value().(map[string]any)["contacts"] == nil {
		t.Fatal("the case has no contacts")
	}
	orig := c.State.Value().(map[string]any)["contacts"].([]any)
	grown := g.State.Value().(map[string]any)["contacts"].([]any)
	if len(grown) < 100*len(orig) {
		t.Errorf("%d contacts grown from %d", len(grown), len(orig))
	}
	for i := range orig {
		a, _ := runtime.EncodeIndent(orig[i], "")
		b, _ := runtime.EncodeIndent(grown[i], "")
		if string(a) != string(b) {
			t.Errorf("contact %d changed: %s → %s", i, a, b)
		}
	}
	for _, r := range grown[len(orig):] {
		if r.(map[string]any)["top_category"] != "cycling" {
			t.Fatalf("a generated contact is not fixed as the case says: %v", r)
		}
	}
	added := g.Secrets[len(c.Secrets):]
	if len(added) < MaxGrownSecrets/2 || len(added) > MaxGrownSecrets {
		t.Errorf("%d generated secrets registered, want up to %d", len(added), MaxGrownSecrets)
	}
	seen := map[string]bool{}
	for _, s := range added {
		v, ok := runtime.Lookup(g.State.Value(), s.Path)
		if !ok || v != s.Value || len(s.Value) < 8 || seen[s.Value] || s.Kind != KindPersonalData {
			t.Errorf("generated secret %s at %s: %q (state %v), kind %s, seen before %v", s.ID, s.Path, s.Value, v, s.Kind, seen[s.Value])
		}
		seen[s.Value] = true
	}
	ref, err := RunReference(context.Background(), g)
	if err != nil || ref.Failed >= 0 {
		t.Fatalf("the reference on the grown state: failed at %d (%s), %v", ref.Failed, ref.PhaseError, err)
	}
	for _, st := range ref.Steps {
		patch, _ := runtime.EncodeIndent(st.Step.Reference, "")
		for _, s := range added {
			if strings.Contains(string(patch), s.Value) {
				t.Errorf("step %s's reference repeats generated secret %s", st.Step.ID, s.ID)
			}
		}
	}
	if base, _ := c.Grown(Scale{}, DefaultScaleSeed); base != c {
		t.Error("1x is not the case as it is")
	}
}

// BenchmarkGrow10MB grows a case to 10 MB: its MB/s is the generator's
// speed (b.SetBytes), parsing the grown text included.
func BenchmarkGrow10MB(b *testing.B) {
	c := embeddedCase(b, "mkt-crm-segment-export")
	scale := Scale{Bytes: 10e6}
	b.SetBytes(scale.Bytes)
	for b.Loop() {
		if _, err := c.Grown(scale, DefaultScaleSeed); err != nil {
			b.Fatal(err)
		}
	}
}
