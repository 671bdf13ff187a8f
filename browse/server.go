package browse

import (
	"bytes"
	"errors"
	"maps"
	"net/http"
	"runtime"
	"strings"

	"golang.org/x/sync/semaphore"
)

// pageData is what the server's page template is given: an overview, a
// run, or an error.
type pageData struct {
	Title    string
	Overview *overview
	Run      *runPage
	Error    string
	Near     []string
}

// Handler serves the browser: the overview at / (filtered by the query
// parameters of Filter; a search that names one run exactly goes to its
// page), a run at /run/CASE/CONFIG/ACTOR/ROUND (?reveal=1 puts its hidden
// values in the page), and the embedded assets under /assets/. Pages
// carry a Content-Security-Policy that allows only the server's own
// assets.
//
// At most GOMAXPROCS pages are made at once, and pages made but not yet
// written to their clients hold at most PendingPageBytes in all; a
// request waiting for either whose client has gone is dropped unanswered,
// so that abandoned requests do not keep the server busy and clients that
// never read their pages cannot grow it (after 1,000 clients left, a
// page took 50 s; 2,500 that never read took 2.7 GB).
func (b *Browser) Handler() http.Handler {
	mux := http.NewServeMux()
	p := &pages{turns: make(chan struct{}, runtime.GOMAXPROCS(0)), pending: semaphore.NewWeighted(PendingPageBytes), budget: PendingPageBytes}
	mux.HandleFunc("GET /{$}", p.inTurn(b.serveOverview))
	mux.HandleFunc("GET /run/{id...}", p.inTurn(b.serveRun))
	mux.HandleFunc("GET /assets/style.css", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, "text/css; charset=utf-8", styleCSS)
	})
	mux.HandleFunc("GET /assets/browse.js", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, "text/javascript; charset=utf-8", browseJS)
	})
	return mux
}

// PendingPageBytes bounds the bytes of the pages made and not yet written
// to their clients, all requests together (64 MiB; a page larger than
// that waits until it is the only one).
const PendingPageBytes = 64 << 20

// pages is what the server's page requests share: the turns to make a
// page (a slot each) and the bytes of pages waiting to be written.
type pages struct {
	turns   chan struct{}
	pending *semaphore.Weighted
	budget  int64
}

// inTurn makes h's page into a buffer once one of p's turns is free,
// gives the turn back, and writes the page once its bytes fit in p's
// pending budget; at each wait, a request whose client goes first is
// dropped unanswered.
func (p *pages) inTurn(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case p.turns <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		if r.Context().Err() != nil {
			<-p.turns
			return
		}
		page := &pageBuffer{header: http.Header{}, code: http.StatusOK}
		h(page, r)
		<-p.turns
		n := min(int64(page.body.Len()), p.budget)
		if err := p.pending.Acquire(r.Context(), n); err != nil {
			return
		}
		defer p.pending.Release(n)
		maps.Copy(w.Header(), page.header)
		w.WriteHeader(page.code)
		w.Write(page.body.Bytes())
	}
}

// pageBuffer is an http.ResponseWriter that keeps the page made, to be
// written once there is room (pages.inTurn).
type pageBuffer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *pageBuffer) Header() http.Header         { return b.header }
func (b *pageBuffer) WriteHeader(code int)        { b.code = code }
func (b *pageBuffer) Write(p []byte) (int, error) { return b.body.Write(p) }

func serveAsset(w http.ResponseWriter, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write([]byte(body))
}

func (b *Browser) serveOverview(w http.ResponseWriter, r *http.Request) {
	f := ParseFilter(r.URL.Query())
	if f.Q != "" {
		if e := b.lookup(strings.Trim(f.Q, "/ ")); e != nil {
			http.Redirect(w, r, "/run/"+escapeID(e.ID), http.StatusSeeOther)
			return
		}
	}
	o := b.overview(f, false)
	o.Unknown = b.UnknownFilters(r.URL.Query())
	b.render(w, http.StatusOK, pageData{Title: "PatchBench runs", Overview: o})
}

func (b *Browser) serveRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id") // unescaped by the mux
	reveal := r.URL.Query().Get("reveal") == "1"
	p, err := b.loadRun(r.Context(), id, reveal)
	var nr errNoRun
	switch {
	case errors.As(err, &nr):
		b.render(w, http.StatusNotFound, pageData{Title: "No such run", Error: nr.Error(), Near: nr.near})
		return
	case err != nil:
		b.render(w, http.StatusInternalServerError, pageData{Title: "The run could not be read", Error: err.Error()})
		return
	}
	p.CanReveal = true
	if reveal {
		// A page with hidden values is not kept by caches.
		w.Header().Set("Cache-Control", "no-store")
	}
	b.render(w, http.StatusOK, pageData{Title: p.ID + " · PatchBench", Run: p})
}

// render writes a page whole, or a plain error if the template fails.
func (b *Browser) render(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := serverPages.ExecuteTemplate(&buf, "page", d); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
