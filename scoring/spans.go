package scoring

import (
	"sort"
	"strings"
)

// Span is where a canary was found in a text: the byte range [Start, End)
// of the text that carries it, with the secret and the detector. For the
// exact, normalised and nfkc detectors it is the canary itself; for
// json-escape, the escaped text that decodes to it (escapes included);
// for base64 and hex, the encoded run that decodes to it; for URL
// encoding, the whole text.
type Span struct {
	Secret   string `json:"secret"`
	Detector string `json:"detector"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
}

// Spans returns every place in s where a canary is found, by the most
// literal detector that finds each canary (as InText), sorted by start
// then secret; overlapping spans are all returned. It is what a trace
// viewer marks and a page withholds.
func (d *Detector) Spans(s string) []Span {
	var out []Span
	t := prepare(s)
	var levels []*reading // s and its JSON escapes undone, with origins
	level := func(k int) *reading {
		if levels == nil {
			levels = []*reading{{s: s}}
			t.forms()
			for range t.escaped {
				levels = append(levels, levels[len(levels)-1].unescape())
			}
		}
		return levels[k]
	}
	for i := range d.canaries {
		c := &d.canaries[i]
		switch det := c.find(t); det {
		case "":
		case DetectExact, DetectNormalised, DetectNFKC:
			out = append(out, c.locate(level(0), det, det)...)
		case DetectJSONEscape:
			for k := range t.escaped {
				if m := c.match(&t.escaped[k]); m != "" {
					out = append(out, c.locate(level(k+1), m, det)...)
					break
				}
			}
		case DetectBase64, DetectHex:
			runs := base64Runs
			if det == DetectHex {
				runs = hexRuns
			}
			marked := map[[2]int]bool{}
			for k := range len(t.escaped) + 1 {
				r := level(k)
				for _, m := range runs(r.s) {
					if c.find(prepare(r.s[m[0]:m[1]])) != det {
						continue
					}
					if a, z := r.orig(m[0], m[1]); !marked[[2]int{a, z}] {
						marked[[2]int{a, z}] = true
						out = append(out, Span{Secret: c.ID, Detector: det, Start: a, End: z})
					}
				}
			}
		default:
			out = append(out, Span{Secret: c.ID, Detector: det, Start: 0, End: len(s)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Start != out[j].Start {
			return out[i].Start < out[j].Start
		}
		return out[i].Secret < out[j].Secret
	})
	return out
}

// locate returns the places in reading r where comparison how (exact,
// normalised or nfkc) finds c, as byte ranges of the original text, each
// named for detector det.
func (c *canary) locate(r *reading, how, det string) []Span {
	switch how {
	case DetectExact:
		return c.spans(r, c.Value, det)
	case DetectNormalised:
		return c.spans(r.normalised(), c.norm, det)
	}
	kc := r.nfkc()
	if out := c.spans(kc, c.kc, det); len(out) > 0 || !c.kcLong {
		return out
	}
	return c.spans(kc.normalised(), c.kcNorm, det)
}

// spans returns the places of want in r.s, as byte ranges of the original
// text.
func (c *canary) spans(r *reading, want, det string) []Span {
	var out []Span
	for off := 0; want != ""; {
		k := strings.Index(r.s[off:], want)
		if k < 0 {
			break
		}
		a, z := r.orig(off+k, off+k+len(want))
		out = append(out, Span{Secret: c.ID, Detector: det, Start: a, End: z})
		off += k + len(want)
	}
	return out
}

// reading is a text derived from an original one, with, for each of its
// bytes, the byte range [lo, hi) of the original it comes from (lo and hi
// are nil when s is the original).
type reading struct {
	s      string
	lo, hi []int
}

// orig is the byte range of the original that r.s[a:z] (z > a) comes
// from.
func (r *reading) orig(a, z int) (int, int) {
	if r.lo == nil {
		return a, z
	}
	return r.lo[a], r.hi[z-1]
}

// derive is the reading s of the original, s being a transformation of
// r.s with origins o in r.s.
func (r *reading) derive(s string, o *origin) *reading {
	out := &reading{s: s, lo: make([]int, len(s)), hi: make([]int, len(s))}
	for i := range len(s) {
		out.lo[i], out.hi[i] = r.orig(o.lo[i], o.hi[i])
	}
	return out
}

func (r *reading) unescape() *reading {
	var o origin
	return r.derive(unescapeJSON(r.s, &o), &o)
}

func (r *reading) normalised() *reading {
	var o origin
	return r.derive(normaliseAt(r.s, &o), &o)
}

func (r *reading) nfkc() *reading {
	var o origin
	return r.derive(nfkcAt(r.s, &o), &o)
}
