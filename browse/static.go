package browse

import (
	"bufio"
	"context"
	"fmt"
	"html/template"
	"io"
)

// WriteHTML writes the overview and every run's page as one
// self-contained HTML file (report --format html): the styles and the
// script inline, no request to anywhere (its Content-Security-Policy
// allows none), a run page at #run-ID, and the overview's filters applied
// by the script from the file's query (?outcome=leaked). The pages are
// the server's, but the file never holds hidden values: a run's page is
// written as the server writes it before the reader asks to reveal them.
// Runs are read from disk and written one at a time.
func (b *B) WriteHTML(w io.Writer) error {
	<-b.casesLoaded // the overview's titles, and every page, need them
	bw := bufio.NewWriterSize(w, 1<<16)
	head := struct {
		Title    string
		CSS      template.CSS
		Overview *overview
	}{Title: "PatchBench runs", CSS: template.CSS(styleCSS), Overview: b.overview(Filter{}, true)}
	if err := staticPages.ExecuteTemplate(bw, "static-head", head); err != nil {
		return err
	}
	for _, r := range b.runs {
		p, err := b.loadRun(context.Background(), r.ID, false)
		if err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
		if err := staticPages.ExecuteTemplate(bw, "static-run", p); err != nil {
			return err
		}
	}
	if err := staticPages.ExecuteTemplate(bw, "static-foot", struct{ JS template.JS }{template.JS(browseJS)}); err != nil {
		return err
	}
	return bw.Flush()
}
