package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// unsafeFileChars are the characters of an actor's name that a file name
// leaves out ("openai:gpt-5" is written "openai-gpt-5").
var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WriteReliabilityPlots writes, into dir, one chart per actor of pass^k
// of a semantic pass against k (Reliability; gonum/plot), a line per
// configuration (a colour of Palette and a marker of Markers, the
// configurations in the order of configs, each nudged sideways a little
// so that equal values stay visible), on [0, 1]: pass^k falls with k for an
// actor that succeeds only sometimes, and stays flat for one that answers
// alike in every round. With runs at several scales, the smallest
// scale's. Files are named reliability-ACTOR.FORMAT (the actor's name
// with any character other than letters, digits, ".", "_" and "-" made
// "-"). It returns the files written; none when rel is empty.
func WriteReliabilityPlots(dir string, rel []Reliability, configs []*bench.Config, actorNames []string, o PlotOptions) ([]string, error) {
	size, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(rel) == 0 {
		return nil, nil
	}
	var scales []string
	for _, r := range rel {
		scales = append(scales, r.Scale)
	}
	SortScales(scales)
	scale := scales[0]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, a := range actorNames {
		p := plot.New()
		p.X.Label.Text = "k (rounds drawn)"
		p.Y.Label.Text = "semantic pass^k"
		for _, ax := range []*plot.Axis{&p.X, &p.Y} {
			ax.Label.TextStyle.Font.Size = 8
			ax.Tick.Label.Font.Size = 7
		}
		addRowGrid(p)
		var legend []series
		maxK := 0
		for i, c := range configs {
			var pts plotter.XYs
			offset := (float64(i) - float64(len(configs)-1)/2) * 0.03
			for _, r := range rel {
				if r.Actor == a && r.Config == c.Name && r.Scale == scale && r.Cases > 0 {
					pts = append(pts, plotter.XY{X: float64(r.K) + offset, Y: r.SemanticHatK})
					maxK = max(maxK, r.K)
				}
			}
			if len(pts) == 0 {
				continue
			}
			style := draw.GlyphStyle{Color: Palette[i%len(Palette)], Shape: Markers[i%len(Markers)], Radius: vg.Points(2.5)}
			line, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			line.LineStyle.Color, line.LineStyle.Width = style.Color, vg.Points(0.8)
			sc.GlyphStyle = style
			p.Add(line, sc)
			legend = append(legend, series{name: c.Label, style: style})
		}
		if len(legend) == 0 {
			continue
		}
		p.X.Min, p.X.Max = 0.5, float64(maxK)+0.5
		p.Y.Min, p.Y.Max = 0, 1
		var ticks []plot.Tick
		for k := 1; k <= maxK; k++ {
			ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		title := fmt.Sprintf("%s: semantic pass^k over %d rounds", a, maxK)
		if scale != "" {
			title += ", at " + scale
		}
		var buf bytes.Buffer
		if err := renderPlot(&buf, p, title, legend, o.Format, size); err != nil {
			return nil, err
		}
		path := filepath.Join(dir, "reliability-"+unsafeFileChars.ReplaceAllString(a, "-")+"."+o.Format)
		if err := rundir.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
