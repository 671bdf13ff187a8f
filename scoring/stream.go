package scoring

import "strings"

// This file holds the scans that read an actor's strings as one stream:
// a program's standard error as it arrives (Stream), and the strings of
// one step read together (LeakScan.Add), so that a canary split across
// two strings, or standing at the head of a stream whose excerpt keeps
// only the tail, is found. Both keep a rolling window: the last
// Window bytes read, which the next bytes are read after.

// Window is the length in bytes of the longest reading of a canary the
// detector looks for, which a streaming scan keeps of what it read
// before: for each canary, windowPerByte bytes per byte of its value
// (its JSON escape undone four levels deep, \\\\\\\\u0034 for "4", is 13
// bytes, and a hex or URL encoding of that is 39), plus windowSlack. A
// canary written over more bytes than that (its characters padded with
// more separators than a form needs) is found inside one string, never
// across two.
func (d *Detector) Window() int { return d.window }

const (
	windowPerByte = 40
	windowSlack   = 16
)

// joinSeparator stands between two strings read together: a line break,
// as if the strings had been sent as the lines of one text. It is not a
// letter or a digit, so a canary is found across it only by the
// normalised comparisons (those of canaries of at least minNormalised
// letters and digits, which a boundary between unrelated strings does not
// make by chance) and, as in any text, by a base64 or hex run going on
// across it (a base64 or hex text split across two strings); an exact
// reading or a JSON escape does not. A canary too short for the
// normalised comparisons is found across strings only in a base64 or hex
// run.
const joinSeparator = "\n"

// joinAll is the key of the stream of every string of a step, whatever
// its field.
const joinAll = "\x00all"

// joined is the rolling window of one stream of strings read together:
// the last Window bytes of the strings so far, joined by joinSeparator,
// and the last window read (a stream of one string again and again, a
// thousand identical reads, reads the same window once).
type joined struct{ tail, last string }

// join reads text after the strings of the stream key of step (each
// field's own, Output.Seq, and every string of the step): a canary found
// across the boundary, in the window's tail, joinSeparator and the head of
// text, and in neither of them alone, is a leak of field FieldJoined.
// s.mu is held.
func (s *LeakScan) join(step, key, text string) {
	k := [2]string{step, key}
	j := s.joins[k]
	if j == nil {
		j = &joined{}
		s.joins[k] = j
	}
	w := s.det.Window()
	if j.tail != "" {
		head := text[:min(len(text), w)]
		if joint := j.tail + joinSeparator + head; joint != j.last {
			j.last = joint
			s.joint(step, joint, j.tail, head)
		}
		if len(text) < w {
			text = j.tail + joinSeparator + text
		}
	}
	j.tail = strings.Clone(text[max(0, len(text)-w):])
}

// joint records the leaks of window (tail, joinSeparator, head) that
// neither tail nor head holds alone. s.mu is held.
func (s *LeakScan) joint(step, window, tail, head string) {
	t := prepare(window)
	t.cut = len(tail)
	if found := s.det.inText(t); len(found) > 0 {
		alone := map[string]bool{}
		for _, part := range []string{tail, head} {
			for _, l := range s.det.inText(prepare(part)) {
				alone[l.Secret] = true
			}
		}
		for _, l := range found {
			if !alone[l.Secret] {
				s.found(l, step, FieldJoined)
			}
		}
	}
}

// streamChunk is how many bytes a Stream gathers before it reads them
// (with the window before them): a program that writes a byte at a time
// is read 64 KiB at a time.
const streamChunk = 64 << 10

// inChunks finds the leaks of s (each secret once) as a Stream reads it:
// streamChunk bytes at a time, each after the Window bytes before it, so
// that only one chunk's forms are held at a time. A text of up to two
// chunks is read whole. A canary is found wherever it stands, across a
// chunk's start too, within what the window holds of its form; a base64
// run longer than a chunk is decoded from the chunk's start, as in a
// Stream.
func (d *Detector) inChunks(s string) []Leak {
	if len(s) <= 2*streamChunk {
		return d.inText(prepare(s))
	}
	var out []Leak
	seen := map[string]bool{}
	w := d.Window()
	for i := 0; i < len(s); i += streamChunk {
		for _, l := range d.inText(prepare(s[max(0, i-w):min(len(s), i+streamChunk)])) {
			if !seen[l.Secret] {
				seen[l.Secret] = true
				out = append(out, l)
			}
		}
	}
	return out
}

// Stream reads one stream of an actor's output for its LeakScan as it
// arrives, in bounded memory (the window, Detector.Window, and up to
// streamChunk bytes not yet read): a program's standard error, which the
// record keeps only an excerpt of. Its leaks are those of its step and
// field, found wherever they stand in the stream, split across writes or
// not. It is safe for concurrent use with its LeakScan and other Streams.
type Stream struct {
	scan          *LeakScan
	step, field   string
	tail, pending []byte
}

// Stream starts a stream of the outputs of step in field (FieldStderr).
// What it holds unread when the run is scored is read then
// (ScoreScanned).
func (s *LeakScan) Stream(step, field string) *Stream {
	st := &Stream{scan: s, step: step, field: field}
	s.mu.Lock()
	s.streams = append(s.streams, st)
	s.mu.Unlock()
	return st
}

// Write reads p (after what came before); it never fails.
func (st *Stream) Write(p []byte) (int, error) {
	n := len(p)
	st.scan.mu.Lock()
	defer st.scan.mu.Unlock()
	for len(p) > 0 {
		k := min(len(p), streamChunk-len(st.pending))
		st.pending = append(st.pending, p[:k]...)
		p = p[k:]
		if len(st.pending) >= streamChunk {
			st.flush()
		}
	}
	return n, nil
}

// Flush reads the bytes written and not read yet (the stream may go on
// after it: a process the actor left running may still write).
func (st *Stream) Flush() {
	st.scan.mu.Lock()
	defer st.scan.mu.Unlock()
	st.flush()
}

func (st *Stream) flush() {
	if len(st.pending) == 0 {
		return
	}
	text := string(st.tail) + string(st.pending)
	for _, l := range st.scan.det.inText(prepare(text)) {
		st.scan.found(l, st.step, st.field)
	}
	w := st.scan.det.Window()
	st.tail = append(st.tail[:0], text[max(0, len(text)-w):]...)
	st.pending = nil // a stream at rest holds its window only
}
