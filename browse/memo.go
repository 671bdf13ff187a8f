package browse

import (
	"strings"
	"sync"

	"github.com/patchbench/patchbench/scoring"
)

// pageMemo keeps what building run pages computes again and again for the
// single file (WriteBundle): the hidden strings of a step's state, the
// masked state and view, the segments of a text and the diff a patch
// makes. A key names what the result depends on: reveal, the case, the
// step and the patches committed before it (memoKey); the runs of one case
// in different configurations, actors and rounds share most of them. A
// nil *pageMemo keeps nothing (the server's pages). It is safe for
// concurrent use: two pages asking for one key at once may both compute
// it, and both get the value kept first.
type pageMemo struct {
	mu       sync.Mutex
	hiddenBy map[[2]string][]string
	segsBy   map[[2]string][]Seg
	textBy   map[[2]string][]Seg
	diffBy   map[[2]string][]diffView
	spansBy  map[[2]string][]scoring.Span
}

func newPageMemo() *pageMemo {
	return &pageMemo{hiddenBy: map[[2]string][]string{}, segsBy: map[[2]string][]Seg{}, textBy: map[[2]string][]Seg{}, diffBy: map[[2]string][]diffView{}, spansBy: map[[2]string][]scoring.Span{}}
}

// memoKey joins the parts of a key with a byte no case id, step id or
// patch text holds unescaped.
func memoKey(reveal bool, parts ...string) string {
	r := "0"
	if reveal {
		r = "1"
	}
	return r + "\x00" + strings.Join(parts, "\x00")
}

func (m *pageMemo) hidden(key string, f func() []string) []string {
	return memoGet(m, func(m *pageMemo) map[[2]string][]string { return m.hiddenBy }, [2]string{key, ""}, f)
}

func (m *pageMemo) segs(key, what string, f func() []Seg) []Seg {
	return memoGet(m, func(m *pageMemo) map[[2]string][]Seg { return m.segsBy }, [2]string{key, what}, f)
}

func (m *pageMemo) text(key, s string, f func() []Seg) []Seg {
	return memoGet(m, func(m *pageMemo) map[[2]string][]Seg { return m.textBy }, [2]string{key, s}, f)
}

func (m *pageMemo) diff(key, patch string, f func() []diffView) []diffView {
	return memoGet(m, func(m *pageMemo) map[[2]string][]diffView { return m.diffBy }, [2]string{key, patch}, f)
}

// spans are the canaries det finds in s (scoring.Detector.Spans), kept
// under the case's key: they depend on the case and the text alone.
func (m *pageMemo) spans(caseKey, s string, det *scoring.Detector) []scoring.Span {
	return memoGet(m, func(m *pageMemo) map[[2]string][]scoring.Span { return m.spansBy }, [2]string{caseKey, s}, func() []scoring.Span { return det.Spans(s) })
}

func memoGet[T any](m *pageMemo, table func(*pageMemo) map[[2]string]T, k [2]string, f func() T) T {
	if m == nil {
		return f()
	}
	m.mu.Lock()
	v, ok := table(m)[k]
	m.mu.Unlock()
	if ok {
		return v
	}
	v = f()
	m.mu.Lock()
	defer m.mu.Unlock()
	if kept, ok := table(m)[k]; ok {
		return kept
	}
	table(m)[k] = v
	return v
}
