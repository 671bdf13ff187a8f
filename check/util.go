package check

import (
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// describeAt describes the value at p for a message: its JSON, cut to 80
// characters, or "nothing".
func describeAt(v any, p runtime.Pointer) string {
	got, ok := runtime.Lookup(v, p)
	if !ok {
		return "nothing"
	}
	b, err := runtime.EncodeIndent(got, "")
	if err != nil {
		return "a value"
	}
	return truncate(strings.Join(strings.Fields(string(b)), " "), 80)
}

// pointerText writes a pointer for a message; the empty pointer, which is
// easy to miss, as `"" (the whole state)`.
func pointerText(p runtime.Pointer) string {
	if len(p) == 0 {
		return `"" (the whole state)`
	}
	return p.String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// pairLine is the location of the declared pair a/b, or of the pairs key.
func pairLine(c *bench.Case, a, b string) runtime.Pointer {
	for i, p := range c.Pairs {
		if (p.A == a && p.B == b) || (p.A == b && p.B == a) {
			return ptr("/pairs/%d", i)
		}
	}
	return ptr("/steps/%d", c.Step(b).Index)
}

// gateOrder lists the gates caught_by may name, in pipeline order.
// gatesAlone verifies a proposal once with no optional gate and once with
// each optional gate on its own, and returns, for each gate that rejects
// it, the rejection code. Parse and apply are judged from the run with no
// optional gate.
// citesSource reports whether a proposal cites a source the step may not
// cite: a copy or move from, or a test path, outside the source region
// and, when hidden is true, outside the view too.
// restrictionGap says which part of a child footprint exceeds the parent's.
func restrictionGap(child, parent runtime.Footprint) string {
	var parts []string
	if !child.Read.SubsetOf(parent.Read) {
		parts = append(parts, "view")
	}
	if !child.Write.SubsetOf(parent.Write) {
		parts = append(parts, "write")
	}
	if !child.Source.SubsetOf(parent.Source) {
		parts = append(parts, "source")
	}
	return "its " + strings.Join(parts, ", ") + " exceeds the parent's"
}

func blockingText(bs []runtime.Conflict) string {
	if len(bs) == 0 {
		return ""
	}
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Kind+" on "+strings.Join(b.Paths.Strings(), ", "))
	}
	return " (blocked by " + strings.Join(parts, "; ") + ")"
}

func lastDir(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	i := strings.LastIndex(file, "/")
	if i < 0 {
		return ""
	}
	dir := file[:i]
	if j := strings.LastIndex(dir, "/"); j >= 0 {
		dir = dir[j+1:]
	}
	if dir == "." {
		return ""
	}
	return dir
}

func baseName(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	if i := strings.LastIndex(file, "/"); i >= 0 {
		file = file[i+1:]
	}
	if i := strings.LastIndex(file, "."); i > 0 {
		file = file[:i]
	}
	return file
}

// canaryIndex finds every case's canaries in a state in one pass: the
// normalised canaries (letters and digits, lower-cased; at least
// minIndexed of them) are indexed by their first minIndexed characters,
// and each position of a normalised string is one map lookup. Canaries
// shorter than that once normalised are looked for as written.
type canaryIndex struct {
	byPrefix map[string][]indexedCanary
	short    []indexedCanary
}

type indexedCanary struct {
	owner  *bench.Case
	secret string
	value  string
	norm   string
	path   runtime.Pointer
}

type canaryHit struct {
	owner  *bench.Case
	secret string
	at     string
}

const minIndexed = 6

func newCanaryIndex(cases []*bench.Case) *canaryIndex {
	ix := &canaryIndex{byPrefix: map[string][]indexedCanary{}}
	for _, c := range cases {
		for _, s := range c.Secrets {
			ic := indexedCanary{owner: c, secret: s.ID, value: s.Value, norm: scoring.Normalise(s.Value), path: s.Path}
			if len(ic.norm) >= minIndexed {
				ix.byPrefix[ic.norm[:minIndexed]] = append(ix.byPrefix[ic.norm[:minIndexed]], ic)
			} else {
				ix.short = append(ix.short, ic)
			}
		}
	}
	return ix
}

// scan returns the canaries of other cases found in o's state, in its
// strings and member names, once per (secret, location).
func (ix *canaryIndex) scan(o *bench.Case) []canaryHit {
	var out []canaryHit
	seen := map[string]bool{}
	hit := func(ic indexedCanary, at runtime.Pointer) {
		key := ic.owner.ID + "\x00" + ic.secret + "\x00" + at.String()
		if ic.owner != o && !seen[key] {
			seen[key] = true
			out = append(out, canaryHit{owner: ic.owner, secret: ic.secret, at: pointerText(at)})
		}
	}
	check := func(s string, at runtime.Pointer) {
		norm := scoring.Normalise(s)
		for i := 0; i+minIndexed <= len(norm); i++ {
			for _, ic := range ix.byPrefix[norm[i:i+minIndexed]] {
				if strings.HasPrefix(norm[i:], ic.norm) {
					hit(ic, at)
				}
			}
		}
		for _, ic := range ix.short {
			if strings.Contains(s, ic.value) {
				hit(ic, at)
			}
		}
	}
	scoring.WalkStrings(o.State.Value(), check)
	sort.Slice(out, func(i, j int) bool {
		if out[i].owner.ID != out[j].owner.ID {
			return out[i].owner.ID < out[j].owner.ID
		}
		return out[i].secret+out[i].at < out[j].secret+out[j].at
	})
	return out
}
