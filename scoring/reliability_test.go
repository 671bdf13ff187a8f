package scoring

import (
	"math"
	"testing"
)

// TestPassHatKAndPassAtK checks the estimators against values worked by
// hand: n = 3 rounds with c = 2 successes give pass^1 = 2/3, pass^2 =
// C(2,2)/C(3,2) = 1/3, pass^3 = 0, pass@1 = 2/3, pass@2 = 1 − C(1,2)/C(3,2)
// = 1; n = 5, c = 3: pass^2 = 3/10, pass@2 = 1 − C(2,2)/C(5,2) = 9/10.
func TestPassHatKAndPassAtK(t *testing.T) {
	for _, c := range []struct {
		n, c, k  int
		hat, atK float64
	}{
		{3, 2, 1, 2.0 / 3, 2.0 / 3},
		{3, 2, 2, 1.0 / 3, 1},
		{3, 2, 3, 0, 1},
		{3, 0, 2, 0, 0},
		{3, 3, 3, 1, 1},
		{5, 3, 2, 3.0 / 10, 9.0 / 10},
		{5, 3, 3, 1.0 / 10, 1},
		{1, 1, 1, 1, 1},
		{1, 0, 1, 0, 0},
		{10, 7, 4, 35.0 / 210, 1 - 0.0},
	} {
		hat, err := PassHatK(c.n, c.c, c.k)
		if err != nil {
			t.Fatal(err)
		}
		at, err := PassAtK(c.n, c.c, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(hat-c.hat) > 1e-12 || math.Abs(at-c.atK) > 1e-12 {
			t.Errorf("n=%d c=%d k=%d: pass^k %v pass@k %v, want %v and %v", c.n, c.c, c.k, hat, at, c.hat, c.atK)
		}
	}
}

// TestPassHatKLargeN: with a thousand rounds the binomial coefficients
// overflow a float64 (C(1000, 500) ≈ 2.7·10^299, C(2000, 1000) beyond),
// the product form does not: pass^k of c = n − 1 is (n − k)/n.
func TestPassHatKLargeN(t *testing.T) {
	n := 2000
	hat, err := PassHatK(n, n-1, 1000)
	if err != nil || math.Abs(hat-0.5) > 1e-9 || math.IsNaN(hat) {
		t.Fatalf("pass^1000 of 1999/2000: %v, %v; want 0.5", hat, err)
	}
	at, err := PassAtK(n, 1, 1000)
	if err != nil || math.Abs(at-0.5) > 1e-9 {
		t.Fatalf("pass@1000 of 1/2000: %v, %v; want 0.5", at, err)
	}
}

// TestPassKErrors: counts that are no rounds are errors, not panics.
func TestPassKErrors(t *testing.T) {
	for _, c := range [][3]int{{0, 0, 1}, {3, 4, 1}, {3, -1, 1}, {3, 2, 0}, {3, 2, 4}} {
		if _, err := PassHatK(c[0], c[1], c[2]); err == nil {
			t.Errorf("PassHatK%v: no error", c)
		}
		if _, err := PassAtK(c[0], c[1], c[2]); err == nil {
			t.Errorf("PassAtK%v: no error", c)
		}
	}
}

// TestHolm checks Holm's adjustment by hand: p = (0.01, 0.04, 0.03,
// 0.005) sorted is 0.005, 0.01, 0.03, 0.04; times 4, 3, 2, 1 that is
// 0.02, 0.03, 0.06, 0.04, and the running maximum makes the last 0.06.
// In the order given: 0.03, 0.06, 0.06, 0.02.
func TestHolm(t *testing.T) {
	got, err := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("Holm: %v, want %v", got, want)
		}
	}
	if got, _ := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm caps at 1: %v", got)
	}
	if _, err := Holm([]float64{0.1, math.NaN()}); err == nil {
		t.Error("Holm of NaN: no error")
	}
}
