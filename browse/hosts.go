package browse

import (
	"net"
	"net/http"
	"strings"
)

// AllowHosts returns h behind a check of each request's Host header
// against addr, the address the server listens on (host:port, as
// net.Listener.Addr gives it): a request is served only when its Host
// names that port and, as host, the listening IP, a loopback name
// (localhost, a name under .localhost, 127.0.0.1, ::1) when the server
// listens on a loopback address, or any IP literal when it listens on
// every interface (0.0.0.0, ::). Any other Host (a name such as
// attacker.example that a DNS-rebinding page has pointed at 127.0.0.1)
// is refused with 403 Forbidden, so a web page the user visits cannot
// read the runs or their revealed values through the user's browser. An
// IP literal cannot be rebound.
func AllowHosts(h http.Handler, addr string) http.Handler {
	lhost, lport, err := net.SplitHostPort(addr)
	lip := net.ParseIP(lhost)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An absolute-form request target (GET http://host/...) sets
		// r.Host from the URL, not the header; no browser sends one to
		// a server that is not its proxy, so it is refused too.
		if err != nil || !hostAllowed(r.Host, lip, lhost, lport) || !strings.HasPrefix(r.RequestURI, "/") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("patchbench browse serves only requests addressed to " + addr + " or, on a loopback address, to localhost on its port; open the address it printed\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a Host header value is one AllowHosts
// serves for a server listening on lhost (lip, when it is an IP) and
// lport.
func hostAllowed(host string, lip net.IP, lhost, lport string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil || port != lport {
		return false // browsers always send the port of a server not on 80
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	ip := net.ParseIP(name)
	switch {
	case name == strings.ToLower(lhost):
		return true
	case ip != nil && lip != nil && ip.Equal(lip):
		return true
	case lip != nil && lip.IsUnspecified():
		return ip != nil // every interface: any address of the machine, by IP
	case lip != nil && lip.IsLoopback():
		return name == "localhost" || strings.HasSuffix(name, ".localhost") || ip != nil && ip.IsLoopback()
	}
	return false
}
