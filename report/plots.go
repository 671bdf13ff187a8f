package report

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchbench/patchbench/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// pointsWithErrors is a series of points with asymmetric vertical error
// bars, for plotter.NewYErrorBars.
type pointsWithErrors struct {
	plotter.XYs
	plotter.YErrors
}

// WritePlots writes the charts of a run directory's summary as PNG files
// in dir (gonum/plot): leak-rate.png and semantic-pass.png per
// configuration with their 95 % Wilson intervals, and tokens.png, tokens
// per run with their t intervals; one series per actor, the
// configurations in the order of configs. It returns the files written.
func WritePlots(dir string, s Summary, configs []*bench.Config, actorNames []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	charts := []struct {
		file, title, ylabel string
		rate                bool
		value               func(Row) (float64, float64, float64)
	}{
		{"leak-rate.png", "Leak rate per configuration (95% Wilson interval)", "leak rate", true, func(r Row) (float64, float64, float64) {
			return r.LeakRate, r.LeakCI.Low, r.LeakCI.High
		}},
		{"semantic-pass.png", "Semantic pass per configuration (95% Wilson interval)", "semantic pass", true, func(r Row) (float64, float64, float64) {
			return r.SemanticPass, r.SemanticPassCI.Low, r.SemanticPassCI.High
		}},
		{"tokens.png", "Tokens per run (95% t interval)", "tokens per run", false, func(r Row) (float64, float64, float64) {
			return r.TokensMean, r.TokensCI.Low, r.TokensCI.High
		}},
	}
	index := map[string]int{}
	var names []string
	for i, c := range configs {
		index[c.Name] = i
		names = append(names, c.Label)
	}
	var files []string
	for _, ch := range charts {
		p := plot.New()
		p.Title.Text = ch.title
		p.Y.Label.Text = ch.ylabel
		p.Legend.Top = true
		for k, a := range actorNames {
			var pts pointsWithErrors
			offset := (float64(k) - float64(len(actorNames)-1)/2) * 0.2
			for _, r := range s.Rows {
				if r.Actor != a || r.Measured() == 0 {
					continue
				}
				v, lo, hi := ch.value(r)
				pts.XYs = append(pts.XYs, plotter.XY{X: float64(index[r.Config]) + offset, Y: v})
				pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
			}
			if len(pts.XYs) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(pts.XYs)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Color = plotutil.Color(k)
			sc.GlyphStyle.Shape = plotutil.Shape(k)
			sc.GlyphStyle.Radius = vg.Points(3)
			eb, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, err
			}
			eb.LineStyle.Color = plotutil.Color(k)
			p.Add(sc, eb)
			p.Legend.Add(a, sc)
		}
		p.NominalX(names...)
		// The axis starts at zero, so that differences are not
		// exaggerated; rates leave room above 1 for the legend.
		p.Y.Min = 0
		if ch.rate {
			p.Y.Max = 1.2
		} else {
			p.Y.Max *= 1.2
		}
		path := filepath.Join(dir, ch.file)
		if err := p.Save(vg.Length(max(6, len(names)+1))*vg.Inch, 4*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
