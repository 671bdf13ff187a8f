package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runner"
)

// progress tells, on standard error, where a run stands (runner.Progress):
// on a terminal a bar redrawn in place at every run and every second; and
// anywhere else (a log file, a CI job, a pipe) one line per interval, so
// that a long run is never silent. Other messages go through say, which
// clears the bar first.
type progress struct {
	w     io.Writer
	tty   bool
	width int           // of the terminal, in columns
	every time.Duration // between two lines when not on a terminal
	start time.Time
	now   func() time.Time

	mu    sync.Mutex
	cur   runner.Progress
	drawn bool // a bar is on the terminal's last line
	stop  chan struct{}
	done  chan struct{}
}

// startProgress starts reporting on w: a bar when tty (width columns
// wide), otherwise a line every interval. An interval ≤ 0 reports nothing
// (say still prints).
func startProgress(w io.Writer, tty bool, width int, every time.Duration) *progress {
	p := &progress{w: w, tty: tty, width: width, every: every, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	p.start = p.now()
	if every <= 0 {
		close(p.done)
		return p
	}
	tick := every
	if tty {
		tick = time.Second
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				if p.cur.Total > 0 {
					p.emit()
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// update takes the runner's latest figures; on a terminal the bar is
// redrawn at once.
func (p *progress) update(pr runner.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = pr
	if p.tty && p.every > 0 {
		p.emit()
	}
}

// say prints one message line, clearing the bar first.
func (p *progress) say(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, format+"\n", a...)
}

// finish stops the reporting and clears the bar.
func (p *progress) finish() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

// clear erases the bar from the terminal.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// emit prints the bar or the line; p.mu is held.
func (p *progress) emit() {
	if !p.tty {
		fmt.Fprintf(p.w, "patchbench run: %s\n", progressText(p.cur, p.now().Sub(p.start)))
		return
	}
	line := progressBar(p.cur, 20) + " " + barText(p.cur, p.now().Sub(p.start))
	if p.width > 0 && len([]rune(line)) > p.width-1 {
		line = string([]rune(line)[:p.width-1])
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.drawn = true
}

// progressText is one progress report: the runs done of those to do, the
// errors, the pending runs and those not started, the tokens, the time
// elapsed and an estimate of the time left (the mean time of a run so far
// times the runs left).
func progressText(pr runner.Progress, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d runs", pr.Done, pr.Total)
	if pr.Total > 0 {
		fmt.Fprintf(&b, " (%d %%)", 100*(pr.Done+pr.NotStarted)/pr.Total)
	}
	fmt.Fprintf(&b, ", %s", report.Plural(pr.Errors, "error"))
	if pr.Pending > 0 {
		fmt.Fprintf(&b, ", %d pending", pr.Pending)
	}
	if pr.NotStarted > 0 {
		fmt.Fprintf(&b, ", %d not started (endpoint down)", pr.NotStarted)
	}
	if pr.Scale != "" {
		fmt.Fprintf(&b, ", the last at scale %s", pr.Scale)
	}
	fmt.Fprintf(&b, ", %s tokens", thousands(pr.Tokens))
	if pr.TokensSent != pr.Tokens {
		fmt.Fprintf(&b, " (%s sent)", thousands(pr.TokensSent))
	}
	fmt.Fprintf(&b, ", %s elapsed", elapsed.Round(time.Second))
	left := pr.Total - pr.Done - pr.NotStarted
	switch {
	case left <= 0:
	case pr.Done == 0:
		b.WriteString(", time left unknown")
	default:
		eta := time.Duration(float64(elapsed) / float64(pr.Done) * float64(left))
		fmt.Fprintf(&b, ", about %s left", eta.Round(time.Second))
	}
	return b.String()
}

// barText is what follows the bar on a terminal, short enough for 80
// columns: the runs done, the errors (and pending runs, and runs not
// started), the tokens, the time elapsed and the time left.
func barText(pr runner.Progress, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d runs, %s", pr.Done, pr.Total, report.Plural(pr.Errors, "error"))
	if pr.Pending > 0 {
		fmt.Fprintf(&b, ", %d pending", pr.Pending)
	}
	if pr.NotStarted > 0 {
		fmt.Fprintf(&b, ", %d not started", pr.NotStarted)
	}
	if pr.Scale != "" {
		fmt.Fprintf(&b, ", last %s", pr.Scale)
	}
	fmt.Fprintf(&b, ", %s tokens, %s", compact(pr.Tokens), elapsed.Round(time.Second))
	if left := pr.Total - pr.Done - pr.NotStarted; left > 0 && pr.Done > 0 {
		fmt.Fprintf(&b, ", ~%s left", (time.Duration(float64(elapsed) / float64(pr.Done) * float64(left))).Round(time.Second))
	}
	return b.String()
}

// compact writes a count with k or M: 918.9k, 1.5M.
func compact(n int) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	case n >= 1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.Itoa(n)
}

// progressBar is a bar of width cells: [=====>    ].
func progressBar(pr runner.Progress, width int) string {
	filled := 0
	if pr.Total > 0 {
		filled = min(width, width*(pr.Done+pr.NotStarted)/pr.Total)
	}
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	return "[" + bar + "]"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
