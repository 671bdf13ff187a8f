package scoring

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a confidence interval [Low, High].
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Wilson is the 95 % Wilson score interval of a rate of successes out of
// n trials (Wilson 1927); [0, 0] when n is 0.
func Wilson(successes, n int) Interval {
	if n == 0 {
		return Interval{}
	}
	z := distuv.UnitNormal.Quantile(0.975)
	p := float64(successes) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return Interval{Low: Round(math.Max(0, centre-half)), High: Round(math.Min(1, centre+half))}
}

// MeanCI returns the mean of xs and its 95 % t interval (Student's t with
// n−1 degrees of freedom); the interval is the mean itself when n < 2.
func MeanCI(xs []float64) (float64, Interval) {
	if len(xs) == 0 {
		return 0, Interval{}
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	if len(xs) < 2 || sd == 0 || math.IsNaN(sd) {
		return mean, Interval{Low: mean, High: mean}
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	half := t * sd / math.Sqrt(float64(len(xs)))
	return mean, Interval{Low: Round(mean - half), High: Round(mean + half)}
}

// McNemar is the exact (binomial) McNemar test of paired outcomes: b
// pairs where only the first is a success, c where only the second is.
// P is the two-sided p-value, 1 when there are no discordant pairs.
type McNemar struct {
	B int     `json:"b"`
	C int     `json:"c"`
	P float64 `json:"p"`
}

// ExactMcNemar computes the exact McNemar test: under the null each
// discordant pair is a fair coin, so P = min(1, 2·P[X ≤ min(b, c)]) with
// X ~ Binomial(b+c, 1/2).
func ExactMcNemar(b, c int) McNemar {
	n := b + c
	if n == 0 {
		return McNemar{B: b, C: c, P: 1}
	}
	bin := distuv.Binomial{N: float64(n), P: 0.5}
	p := 2 * bin.CDF(float64(min(b, c)))
	return McNemar{B: b, C: c, P: math.Min(1, p)}
}

// Round rounds to 12 decimal places, so that floating-point noise
// (0.9999999999999999) does not reach reports.
func Round(x float64) float64 { return math.Round(x*1e12) / 1e12 }

// Mean is the arithmetic mean of xs (gonum's stat.Mean); NaN when xs is
// empty.
func Mean(xs []float64) float64 { return stat.Mean(xs, nil) }
