package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PlotFormats are the file formats of the plots.
var PlotFormats = []string{"png", "svg", "pdf"}

// PlotSizes are the figure sizes: a figure one column of a two-column
// paper wide (3.5 in), or the width of the page (7 in).
var PlotSizes = map[string][2]vg.Length{
	"one-column": {3.5 * vg.Inch, 2.6 * vg.Inch},
	"two-column": {7 * vg.Inch, 2.8 * vg.Inch},
}

// PlotOptions choose the plots' format and size.
type PlotOptions struct {
	Format string // one of PlotFormats (default png)
	Size   string // a key of PlotSizes (default one-column)
}

// Palette is the plots' series colours: Okabe and Ito's colour-blind-safe
// palette (blue, vermillion, bluish green, orange, reddish purple, sky
// blue, yellow, black); each series also has its own marker (Markers).
var Palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, color.RGBA{0xD5, 0x5E, 0x00, 0xff}, color.RGBA{0x00, 0x9E, 0x73, 0xff},
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, color.RGBA{0xCC, 0x79, 0xA7, 0xff}, color.RGBA{0x56, 0xB4, 0xE9, 0xff},
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, color.RGBA{0x00, 0x00, 0x00, 0xff},
}

// Markers are the series' marker shapes, so that no series is told from
// another by its colour alone.
var Markers = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.TriangleGlyph{}}

// pointsWithErrors is a series of points with asymmetric vertical error
// bars, for plotter.NewYErrorBars.
type pointsWithErrors struct {
	plotter.XYs
	plotter.YErrors
}

// chart is one of the plots: its file name, title, axis label, whether it
// is a rate (on [0, 1]) and how a row gives its value and interval.
type chart struct {
	file, title, ylabel string
	rate                bool
	value               func(Row) (float64, float64, float64)
}

var charts = []chart{
	{"leak-rate", "Leak rate (95% Wilson interval)", "leak rate", true, func(r Row) (float64, float64, float64) {
		return r.LeakRate, r.LeakCI.Low, r.LeakCI.High
	}},
	{"illegal-commits", "Runs with an illegal commit (95% Wilson interval)", "illegal commit rate", true, func(r Row) (float64, float64, float64) {
		return r.IllegalCommitRate, r.IllegalCommitCI.Low, r.IllegalCommitCI.High
	}},
	{"semantic-pass", "Semantic pass (95% Wilson interval)", "semantic pass", true, func(r Row) (float64, float64, float64) {
		return r.SemanticPass, r.SemanticPassCI.Low, r.SemanticPassCI.High
	}},
	{"tokens", "Tokens per run (95% t interval)", "tokens per run", false, func(r Row) (float64, float64, float64) {
		return r.TokensMean, r.TokensCI.Low, r.TokensCI.High
	}},
}

// PNGDPI is the resolution of PNG plots, in dots per inch: what a printed
// paper needs (a one-column figure is 1050 pixels wide).
const PNGDPI = 300

// newCanvas makes the canvas of a plot in format (one of PlotFormats) of
// w×h: PNG at PNGDPI on white, SVG, or PDF with its fonts embedded.
func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))}, nil
	case "svg":
		return vgsvg.New(w, h), nil
	case "pdf":
		return vgpdf.New(w, h), nil
	}
	return nil, fmt.Errorf("unknown plot format %q (png, svg or pdf)", format)
}

// withDefaults fills in o's format (png) and size (one-column) when
// they are empty and returns the size's width and height; an unknown
// size is an error.
func (o *PlotOptions) withDefaults() ([2]vg.Length, error) {
	if o.Format == "" {
		o.Format = "png"
	}
	if o.Size == "" {
		o.Size = "one-column"
	}
	size, ok := PlotSizes[o.Size]
	if !ok {
		return size, fmt.Errorf("unknown plot size %q (one-column or two-column)", o.Size)
	}
	return size, nil
}

// WritePlots writes the charts of a summary into dir (gonum/plot), in
// o's format and size: leak-rate, illegal-commits and semantic-pass per
// configuration with their 95 % Wilson intervals on [0, 1], and tokens, tokens per run
// from 0 with their t intervals; one series per actor (a colour of
// Palette and a marker of Markers), the configurations in the order of
// configs. The title and the legend sit above the axes, outside the data.
// It returns the files written.
func WritePlots(dir string, s Summary, configs []*bench.Config, actorNames []string, o PlotOptions) ([]string, error) {
	size, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, buf *bytes.Buffer) error {
		path := filepath.Join(dir, name+"."+o.Format)
		if err := rundir.WriteFileAtomic(path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, path)
		return nil
	}
	// With runs at several scales, the charts per configuration show
	// the smallest scale's rows (a row per scale would share a place),
	// and two charts more show the figures against the scale.
	base := s
	if s.MultiScale() {
		base.Rows = nil
		for _, r := range s.Rows {
			if ScaleName(r.Scale) == s.Scales[0] {
				base.Rows = append(base.Rows, r)
			}
		}
	}
	for _, ch := range charts {
		if s.MultiScale() {
			ch.title += ", at " + s.Scales[0]
		}
		var buf bytes.Buffer
		if err := drawChart(&buf, ch, base, configs, actorNames, o.Format, size, o.Size == "one-column"); err != nil {
			return nil, err
		}
		if err := write(ch.file, &buf); err != nil {
			return nil, err
		}
	}
	if !s.MultiScale() {
		return files, nil
	}
	for _, ch := range scaleCharts {
		var buf bytes.Buffer
		if err := drawScaleChart(&buf, ch, s, configs, o.Format, size); err != nil {
			return nil, err
		}
		if err := write(ch.file, &buf); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// scaleChart is a chart of a figure against the scale, a series per
// configuration over its actors' runs with an outcome: file name, title,
// axis label, whether it is a rate, and the figure of a configuration's
// rows at one scale (the value and its interval, hasCI false when there
// is none to draw).
type scaleChart struct {
	file, title, ylabel string
	rate                bool
	value               func(rows []Row) (v, lo, hi float64, hasCI bool)
}

// scaleCharts are the charts against the scale (WritePlots draws them
// when the runs are at two scales or more).
var scaleCharts = []scaleChart{
	{"tokens-by-scale", "Tokens per run against scale (mean over the actors' runs)", "tokens per run", false, func(rows []Row) (float64, float64, float64, bool) {
		sum, n := 0.0, 0
		for _, r := range rows {
			sum += r.TokensMean * float64(r.Measured())
			n += r.Measured()
		}
		return sum / float64(n), 0, 0, false
	}},
	{"leak-rate-by-scale", "Leak rate against scale (95% Wilson interval)", "leak rate", true, func(rows []Row) (float64, float64, float64, bool) {
		leaked, n := 0, 0
		for _, r := range rows {
			leaked += int(math.Round(r.LeakRate * float64(r.Measured())))
			n += r.Measured()
		}
		ci := scoring.Wilson(leaked, n)
		return float64(leaked) / float64(n), ci.Low, ci.High, true
	}},
}

// drawScaleChart draws a chart against the scale into w: the scales of
// the summary on the x axis in order (evenly spaced: the axis is not to
// size), a series per configuration (a colour of Palette, a marker of
// Markers, its points joined by a line), its interval bars when the
// figure has them.
func drawScaleChart(w *bytes.Buffer, ch scaleChart, s Summary, configs []*bench.Config, format string, size [2]vg.Length) error {
	const labelSize, tickSize = 8, 7
	p := plot.New()
	p.Y.Label.Text = ch.ylabel
	p.X.Label.Text = "scale (state size; not to size)"
	p.X.Label.TextStyle.Font.Size = labelSize
	p.Y.Label.TextStyle.Font.Size = labelSize
	p.Y.Tick.Label.Font.Size = tickSize
	p.X.Tick.Label.Font.Size = tickSize
	addRowGrid(p)
	var legend []series
	top := 0.0
	for k, cfg := range configs {
		var pts pointsWithErrors
		offset := (float64(k) - float64(len(configs)-1)/2) * min(0.5/float64(len(configs)), 0.08)
		bars := false
		for i, sc := range s.Scales {
			var rows []Row
			for _, r := range s.Rows {
				if r.Config == cfg.Name && ScaleName(r.Scale) == sc && r.Measured() > 0 {
					rows = append(rows, r)
				}
			}
			if len(rows) == 0 {
				continue
			}
			v, lo, hi, hasCI := ch.value(rows)
			if !hasCI {
				lo, hi = v, v
			}
			bars = bars || hasCI
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(i) + offset, Y: v})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
			top = math.Max(top, hi)
		}
		if len(pts.XYs) == 0 {
			continue
		}
		style := draw.GlyphStyle{Color: Palette[k%len(Palette)], Shape: Markers[k%len(Markers)], Radius: vg.Points(2.5)}
		line, points, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return err
		}
		line.Color, line.Width = style.Color, vg.Points(0.8)
		points.GlyphStyle = style
		p.Add(line, points)
		if bars {
			eb, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return err
			}
			eb.LineStyle.Color = style.Color
			eb.LineStyle.Width = vg.Points(0.8)
			eb.CapWidth = vg.Points(4)
			p.Add(eb)
		}
		legend = append(legend, series{name: cfg.Label, style: style})
	}
	p.NominalX(s.Scales...)
	p.X.Min, p.X.Max = -0.5, float64(len(s.Scales))-0.5
	p.Y.Min = 0
	if ch.rate {
		p.Y.Max = 1
	} else {
		p.Y.Max = math.Max(1, top*1.08)
		p.Y.Tick.Marker = wholeTicks{}
	}
	return renderPlot(w, p, ch.title, legend, format, size)
}

// series is one actor's points of a chart.
type series struct {
	name  string
	style draw.GlyphStyle
}

// drawChart draws one chart into w.
func drawChart(w *bytes.Buffer, ch chart, s Summary, configs []*bench.Config, actorNames []string, format string, size [2]vg.Length, narrow bool) error {
	const labelSize, tickSize = 8, 7
	index := map[string]int{}
	var names []string
	for i, c := range configs {
		index[c.Name] = i
		names = append(names, c.Label)
	}
	p := plot.New()
	p.Y.Label.Text = ch.ylabel
	p.Y.Label.TextStyle.Font.Size = labelSize
	p.Y.Tick.Label.Font.Size = tickSize
	p.X.Tick.Label.Font.Size = tickSize
	if narrow && len(names) > 3 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	addRowGrid(p)
	var legend []series
	top := 0.0
	for k, a := range actorNames {
		var pts pointsWithErrors
		offset := (float64(k) - float64(len(actorNames)-1)/2) * min(0.6/float64(len(actorNames)), 0.2)
		for _, r := range s.Rows {
			if r.Actor != a || r.Measured() == 0 {
				continue
			}
			v, lo, hi := ch.value(r)
			pts.XYs = append(pts.XYs, plotter.XY{X: float64(index[r.Config]) + offset, Y: v})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
			top = math.Max(top, hi)
		}
		if len(pts.XYs) == 0 {
			continue
		}
		style := draw.GlyphStyle{Color: Palette[k%len(Palette)], Shape: Markers[k%len(Markers)], Radius: vg.Points(2.5)}
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return err
		}
		sc.GlyphStyle = style
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return err
		}
		eb.LineStyle.Color = style.Color
		eb.LineStyle.Width = vg.Points(0.8)
		eb.CapWidth = vg.Points(4)
		p.Add(eb, sc)
		legend = append(legend, series{name: a, style: style})
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	// Rates are on [0, 1]; tokens start at zero, so that differences are
	// not exaggerated.
	p.Y.Min = 0
	if ch.rate {
		p.Y.Max = 1
	} else {
		p.Y.Max = math.Max(1, top*1.08)
	}
	return renderPlot(w, p, ch.title, legend, format, size)
}

// renderPlot draws p into w in format at size, on white, its title
// (titleText) above everything and its legend in rows under the title,
// outside the data.
func renderPlot(w *bytes.Buffer, p *plot.Plot, titleText string, legend []series, format string, size [2]vg.Length) error {
	const titleSize, tickSize = 9, 7
	p.BackgroundColor = color.White
	cw, err := newCanvas(format, size[0], size[1])
	if err != nil {
		return err
	}
	c := draw.New(cw)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(4)
	// The title, above everything.
	title := draw.TextStyle{Color: color.Black, Font: font.From(p.Y.Label.TextStyle.Font, titleSize), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: p.Y.Label.TextStyle.Handler}
	c.FillText(title, vg.Point{X: c.Center().X, Y: c.Max.Y - pad}, titleText)
	y := c.Max.Y - pad - title.Height(titleText) - pad
	// The legend, in rows under the title, outside the data.
	y = drawLegend(c, legend, y, tickSize, p.Y.Label.TextStyle)
	p.Draw(draw.Crop(c, 0, -pad, 0, y-c.Max.Y))
	_, err = cw.WriteTo(w)
	return err
}

// drawLegend draws the series' markers and names in rows from y down,
// centred, and returns the y under the last row.
func drawLegend(c draw.Canvas, entries []series, y vg.Length, size float64, base draw.TextStyle) vg.Length {
	if len(entries) == 0 {
		return y
	}
	sty := draw.TextStyle{Color: color.Black, Font: font.From(base.Font, font.Length(size)), XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: base.Handler}
	gap, mark := vg.Points(10), vg.Points(9)
	rowH := sty.Height("Mg") + vg.Points(3)
	width := func(e series) vg.Length { return mark + sty.Width(e.name) }
	var rows [][]series
	var cur []series
	var curW vg.Length
	avail := c.Max.X - c.Min.X - vg.Points(8)
	for _, e := range entries {
		if len(cur) > 0 && curW+gap+width(e) > avail {
			rows, cur, curW = append(rows, cur), nil, 0
		}
		if len(cur) > 0 {
			curW += gap
		}
		cur, curW = append(cur, e), curW+width(e)
	}
	rows = append(rows, cur)
	for _, row := range rows {
		var total vg.Length
		for i, e := range row {
			if i > 0 {
				total += gap
			}
			total += width(e)
		}
		x := c.Center().X - total/2
		mid := y - rowH/2
		for _, e := range row {
			c.DrawGlyphNoClip(e.style, vg.Point{X: x + vg.Points(3), Y: mid})
			c.FillText(sty, vg.Point{X: x + mark, Y: mid}, e.name)
			x += width(e) + gap
		}
		y -= rowH
	}
	return y - vg.Points(2)
}

// wholeTicks are gonum's default ticks labelled as whole numbers
// ("75000", not "75000.00"), for counts such as tokens.
type wholeTicks struct{}

// Ticks returns the default ticks of [lo, hi], their labels whole.
func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(math.Round(ts[i].Value), 'f', -1, 64)
		}
	}
	return ts
}

// addRowGrid adds horizontal grid lines only, under the data (added
// first): a vertical line would run through the middle series of each
// group of points.
func addRowGrid(p *plot.Plot) {
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 0xd8}
	p.Add(grid)
}
