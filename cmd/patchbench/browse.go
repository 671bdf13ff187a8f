package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"golang.org/x/net/netutil"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/browse"
	"github.com/patchbench/patchbench/rundir"
)

const browseExamples = `  # The runs of a directory in the web browser (open the address it prints):
  patchbench browse results/run-1a2b3c4d5e

  # Two models run on different days, as one comparison:
  patchbench browse results/gpt-5-mini results/mistral

  # Another port (0 picks a free one); the address is printed either way:
  patchbench browse results/run-1a2b3c4d5e --addr 127.0.0.1:0

  # The leaked runs of one configuration, straight from the address bar:
  #   http://127.0.0.1:8484/?config=verify-only&outcome=leaked

  # The runs that leaked an access link against a stated sharing policy:
  #   http://127.0.0.1:8484/?kind=access-link&mechanism=policy
`

// runBrowse serves the runs of one or more run directories as web pages
// (package browse) until it is interrupted. It opens no browser: it
// prints the address.
func runBrowse(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("browse", "patchbench browse DIR... [--addr HOST:PORT] [--cases DIR] [--baseline NAME] [--common]", browseExamples, stdout, stderr)
	addr := fs.String("addr", "127.0.0.1:8484", "the `address` to serve on (host:port; port 0 picks a free one); anyone who can reach it reads the runs, prompts and responses")
	casesDir := fs.String("cases", "", "the case set `dir` of the runs, when the manifests' case sets cannot be loaded from here")
	common := fs.Bool("common", false, commonUsage)
	baseline := fs.String("baseline", "", "the configuration `name` the paired tests compare the others against (default patchoptic, when present)")
	pos, err := fs.parseDirs(args)
	if err != nil {
		return fs.exit(err)
	}
	if h, _, err := net.SplitHostPort(*addr); err != nil || h == "" {
		return fs.usageError("--addr %q: want HOST:PORT with a host (127.0.0.1:8484; 0.0.0.0:8484 to serve every interface, on purpose)", *addr)
	}
	if err := rundir.CheckDistinct(pos); err != nil {
		return fs.usageError("%v", err)
	}
	if os.Getenv("GOGC") == "" {
		// The server keeps the index as long as it runs, and indexing
		// and pages make short-lived garbage: collecting when the heap
		// has grown by half its live size (instead of doubled) keeps a
		// 20-round directory of the default benchmark under 100 MiB
		// (102 MB peak at the default, 91 MB at 50) for about a tenth
		// more CPU at open. GOGC, when set, decides instead.
		debug.SetGCPercent(50)
	}
	start := time.Now()
	// Warnings come from the background, where the case sets load.
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "patchbench browse: "+format+"\n", a...)
	}
	b, err := browse.Open(pos, browse.Options{CasesDir: *casesDir, Baseline: *baseline, Common: *common, Warn: func(msg string) { say("%s", msg) }})
	if err != nil && !*common {
		err = commonHint(err)
	}
	if err != nil {
		return failf(stderr, "browse", "%v", err)
	}
	sayLeftOut(stderr, "browse", b.LeftOut())
	opened := time.Since(start)
	// Indexing made garbage the server will not need again: give it
	// back to the system before serving.
	debug.FreeOSMemory()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		say("%v", err)
		return exitUsage
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		say("%s is reachable from other machines: they can read every prompt and response, and reveal the hidden values", ln.Addr())
	}
	// Only requests addressed to this server: a DNS-rebinding page cannot
	// read it through the user's browser.
	//
	// Bounded whatever the clients do (2,500 connections that never
	// read their page held 2.7 GB): the pages made and not yet
	// written hold at most browse.PendingPageBytes (the handler), at most
	// browseMaxConns connections are held (the next wait to be accepted;
	// an idle one costs a few KB), a request has 10 s for its headers, a
	// page browseWriteTime to be read (one not read by then is dropped, and
	// its bytes with it), an idle connection is closed after 30 s.
	ln = netutil.LimitListener(ln, browseMaxConns)
	srv := &http.Server{Handler: browse.AllowHosts(b.Handler(), ln.Addr().String()),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: browseWriteTime, IdleTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	say("%d runs of %s opened in %.2fs; Ctrl-C stops the server", b.Runs(), strings.Join(pos, ", "), opened.Seconds())
	fmt.Fprintf(stdout, "http://%s/\n", ln.Addr())
	select {
	case err := <-done:
		say("%v", err)
		return exitUsage
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		say("%v", err)
		return exitUsage
	}
	return exitOK
}

// Bounds of browse's server: the connections it holds at once (a browser
// opens six a host; 64 idle ones kept every other client waiting) and
// the time a page has to be written.
const (
	browseMaxConns  = 1024
	browseWriteTime = 30 * time.Second
)
