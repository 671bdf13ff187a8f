package scoring

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestWilson(t *testing.T) {
	// Reference values: Wilson 95 % for 14.5/46-like counts, computed by
	// hand from the closed form with z = 1.959964.
	tests := []struct {
		k, n      int
		low, high float64
	}{
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
		{15, 46, 0.2085, 0.4705},
		{0, 0, 0, 0},
	}
	for _, tt := range tests {
		got := Wilson(tt.k, tt.n)
		if !near(got.Low, tt.low, 1e-3) || !near(got.High, tt.high, 1e-3) {
			t.Errorf("Wilson(%d, %d) = %+v, want [%.4f, %.4f]", tt.k, tt.n, got, tt.low, tt.high)
		}
	}
}

func TestMeanCI(t *testing.T) {
	mean, ci := MeanCI([]float64{1, 2, 3, 4, 5})
	// mean 3, sd 1.5811, t(4) = 2.7764: half width 1.9632.
	if mean != 3 || !near(ci.Low, 1.0368, 1e-3) || !near(ci.High, 4.9632, 1e-3) {
		t.Errorf("MeanCI = %v %+v", mean, ci)
	}
	if m, ci := MeanCI([]float64{7}); m != 7 || ci.Low != 7 || ci.High != 7 {
		t.Errorf("one value: %v %+v", m, ci)
	}
}

func TestExactMcNemar(t *testing.T) {
	tests := []struct {
		b, c int
		p    float64
	}{
		{0, 0, 1},
		{5, 5, 1},
		{10, 0, 0.001953},  // 2 · 0.5^10
		{8, 2, 0.109375},   // 2 · P[X ≤ 2], X ~ B(10, 1/2) = 2 · 56/1024
		{1, 20, 0.0000210}, // 2 · 22/2^21
	}
	for _, tt := range tests {
		got := ExactMcNemar(tt.b, tt.c)
		if !near(got.P, tt.p, 1e-5) {
			t.Errorf("ExactMcNemar(%d, %d) = %v, want %v", tt.b, tt.c, got.P, tt.p)
		}
	}
}
