package browse

import (
	"bytes"
	"errors"
	"net/http"
	"runtime"
	"strings"
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
// At most GOMAXPROCS pages are made at once; a request waiting for its
// turn whose client has gone is dropped unanswered, so that abandoned
// requests do not keep the server busy (issue 23: after 1,000 clients
// left, a page took 50 s).
func (b *Browser) Handler() http.Handler {
	mux := http.NewServeMux()
	turns := make(chan struct{}, runtime.GOMAXPROCS(0))
	mux.HandleFunc("GET /{$}", inTurn(turns, b.serveOverview))
	mux.HandleFunc("GET /run/{id...}", inTurn(turns, b.serveRun))
	mux.HandleFunc("GET /assets/style.css", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, "text/css; charset=utf-8", styleCSS)
	})
	mux.HandleFunc("GET /assets/browse.js", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, "text/javascript; charset=utf-8", browseJS)
	})
	return mux
}

// inTurn serves h once one of turns is free, and not at all when the
// request's client goes first.
func inTurn(turns chan struct{}, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case turns <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-turns }()
		if r.Context().Err() != nil {
			return
		}
		h(w, r)
	}
}

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
