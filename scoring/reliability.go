package scoring

import (
	"fmt"
	"math"
	"sort"
)

// checkNCK refuses counts an estimator over rounds cannot take: n
// rounds of a case, c of them successes, k the rounds drawn.
func checkNCK(n, c, k int) error {
	switch {
	case n < 1:
		return fmt.Errorf("n = %d rounds: at least one is needed", n)
	case c < 0 || c > n:
		return fmt.Errorf("c = %d successes out of n = %d rounds: c must be in [0, n]", c, n)
	case k < 1 || k > n:
		return fmt.Errorf("k = %d out of n = %d rounds: k must be in [1, n]", k, n)
	}
	return nil
}

// PassHatK is pass^k of one case (Yao et al. 2024, "τ-bench", the
// reliability figure pass^k): the chance that k rounds drawn without
// replacement from the case's n rounds, c of which succeeded, all
// succeed, C(c, k) / C(n, k). It is computed as the product
// ∏_{i<k} (c − i)/(n − i), so it never overflows whatever n (a binomial
// coefficient of a few hundred rounds does not fit a float64); 0 when
// c < k. An error when n < 1, c is outside [0, n] or k outside [1, n].
func PassHatK(n, c, k int) (float64, error) {
	if err := checkNCK(n, c, k); err != nil {
		return 0, err
	}
	return ratioProduct(c, n, k), nil
}

// PassAtK is pass@k of one case, the unbiased estimator of Chen et al.
// 2021 ("Evaluating Large Language Models Trained on Code", eq. 1): the
// chance that at least one of k rounds drawn without replacement from
// the case's n rounds, c of which succeeded, succeeds,
// 1 − C(n − c, k) / C(n, k), computed as 1 − ∏_{i<k} (n − c − i)/(n − i)
// (no overflow); 1 when n − c < k. Errors as PassHatK's.
func PassAtK(n, c, k int) (float64, error) {
	if err := checkNCK(n, c, k); err != nil {
		return 0, err
	}
	return 1 - ratioProduct(n-c, n, k), nil
}

// ratioProduct is C(a, k) / C(n, k) for 0 ≤ a ≤ n and 1 ≤ k ≤ n, as
// ∏_{i<k} (a − i)/(n − i): 0 when a < k.
func ratioProduct(a, n, k int) float64 {
	if a < k {
		return 0
	}
	p := 1.0
	for i := 0; i < k; i++ {
		p *= float64(a-i) / float64(n-i)
	}
	return p
}

// Holm is Holm's step-down adjustment of the p-values ps (Holm 1979, "A
// simple sequentially rejective multiple test procedure"), which keeps the
// family-wise error rate of the m tests at alpha when a test is rejected
// at an adjusted p ≤ alpha: sorted ascending, p_(i) becomes
// max over j ≤ i of min(1, (m − j + 1)·p_(j)) (i, j from 1). It returns
// the adjusted values in the order of ps; ps is not changed. Ties keep
// their order. A p outside [0, 1] (or NaN) is an error.
func Holm(ps []float64) ([]float64, error) {
	for i, p := range ps {
		if !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("p-value %d is %v: a p-value is in [0, 1]", i, p)
		}
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return ps[order[i]] < ps[order[j]] })
	out := make([]float64, len(ps))
	prev := 0.0
	for j, i := range order {
		adj := math.Max(prev, math.Min(1, float64(len(ps)-j)*ps[i]))
		out[i], prev = adj, adj
	}
	return out, nil
}
