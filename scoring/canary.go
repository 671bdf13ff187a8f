package scoring

import "github.com/patchbench/patchbench/bench"

// Canaries returns the secrets of case c as the canaries a Detector looks
// for: each secret's id, value and path.
func Canaries(c *bench.Case) []Canary {
	out := make([]Canary, len(c.Secrets))
	for i, s := range c.Secrets {
		out[i] = Canary{ID: s.ID, Value: s.Value, Path: s.Path}
	}
	return out
}
