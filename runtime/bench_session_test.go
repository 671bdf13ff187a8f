package runtime

import (
	"context"
	"testing"
)

// BenchmarkRuntimeSessionStep: steps of a Session (session.go, newer than
// the base revision scripts/bench-runtime.sh compares with by default, so it
// has no "before" for it) that verify chainPatch on the state the last step
// committed and then move the phase (SetString at /phase), as the runner
// steps a workflow whose steps advance it; every tenth state's text is
// built. The first steps, untimed, pay what a state costs once: the first
// writes the state's text whole (SetString on a parsed state), the second
// validates that state whole and reads its containers; the later ones encode
// only what changed.
func BenchmarkRuntimeSessionStep(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := StepOptions{Gates: DefaultGates, AdvanceTo: "review"}
	for i, doc := range runtimeStates(b) {
		b.Run(runtimeSizes[i].name, func(b *testing.B) {
			b.ReportAllocs()
			s := NewSession(doc, Pointer{"phase"})
			step := func() {
				r, err := s.Step(context.Background(), c, []byte(chainPatch), opts)
				if err != nil || !r.Committed || r.PhaseError != nil {
					b.Fatalf("%v %+v %v", err, r.Rejection(), r.PhaseError)
				}
			}
			step()
			step()
			n := 0
			for b.Loop() {
				step()
				if n++; n%10 == 0 {
					_ = s.State().Bytes()
				}
			}
		})
	}
}
