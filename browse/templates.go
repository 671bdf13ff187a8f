package browse

import (
	"embed"
	"html/template"
	"net/url"
	"strings"
)

//go:embed templates/pages.html
var templateFS embed.FS

//go:embed assets/style.css
var styleCSS string

//go:embed assets/browse.js
var browseJS string

// templates are the pages of one kind of output: the server's (a run at
// /run/ID, the overview at /?query) or the single file's (a run at
// #run-ID, the overview at ?query, read by its script).
type templates struct{ *template.Template }

func newTemplates(static bool) templates {
	funcs := template.FuncMap{
		"join": strings.Join,
		"runHref": func(id string) string {
			if static {
				return "#run-" + escapeID(id)
			}
			return "/run/" + escapeID(id)
		},
		"overviewHref": func(query string) string {
			if static {
				return "?" + query
			}
			return "/?" + query
		},
	}
	return templates{template.Must(template.New("pages").Funcs(funcs).ParseFS(templateFS, "templates/pages.html"))}
}

var serverPages, staticPages = newTemplates(false), newTemplates(true)

// escapeID escapes each part of a run id for a URL path.
func escapeID(id string) string {
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
