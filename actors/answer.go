package actors

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/patchbench/patchbench/internal/textcut"
)

// DefaultMaxAnswerBytes is the longest answer an actor may send (1 MiB;
// run --max-answer-bytes changes it). A proposal is a few KB; a longer
// answer is the actor's fault, and the runner rejects it with
// limit_exceeded.
const DefaultMaxAnswerBytes = 1 << 20

// KeptAnswerBytes is how much of an over-long answer a record keeps
// (64 KiB; Response.Kept): its start, with its full length
// (Response.Oversize). The runner scans it up to the answer limit first.
const KeptAnswerBytes = 64 << 10

// maxDrainBytes bounds what is read of one response body to measure an
// over-long answer (1 GiB): past it the length is counted no further.
const maxDrainBytes = 1 << 30

// envelopeBytes is the room a response body gets beyond twice the answer
// it carries (the JSON around it, escapes in it).
const envelopeBytes = 64 << 10

// answerLimit is limit, or DefaultMaxAnswerBytes when it is not positive:
// what every bound of an answer starts from.
func answerLimit(limit int64) int64 {
	if limit <= 0 {
		return DefaultMaxAnswerBytes
	}
	return limit
}

// bodyBound is how much of what carries an answer of at most limit bytes
// (answerLimit) is read whole, in bytes: twice the answer (its JSON
// escapes) and envelopeBytes of room. A provider's response body, an exec
// program's standard output and an MCP message all get it.
func bodyBound(limit int64) int64 { return 2*answerLimit(limit) + envelopeBytes }

// ollamaBodyBytes is the longest body handed to the Ollama client, whose
// reader stops silently at 8,000,000 bytes per line.
const ollamaBodyBytes = 7 << 20

// Clip returns r with an answer longer than limit bytes (at most
// DefaultMaxAnswerBytes when limit is not positive) cut to its first
// limit bytes, at a UTF-8 boundary, and Oversize set to its full length;
// an answer within the limit is returned as it is. The arguments of each
// tool call are clipped the same way (ToolCall.Oversize). What is kept is
// what the runner scans for leaks: a canary anywhere in the first limit
// bytes of an answer counts. Kept cuts it further for the record.
func (r Response) Clip(limit int64) Response {
	limit = answerLimit(limit)
	n := int(min(limit, int64(math.MaxInt)))
	cloned := false
	for i, c := range r.Calls {
		if size := max(c.Oversize, int64(len(c.Arguments))); size > limit {
			if !cloned {
				r.Calls, cloned = slices.Clone(r.Calls), true // the caller's slice is not changed
			}
			r.Calls[i].Oversize, r.Calls[i].Arguments = size, textcut.Cut(c.Arguments, n)
		}
	}
	if size := max(r.Oversize, int64(len(r.Raw))); size > limit {
		r.Oversize, r.Raw = size, textcut.Cut(r.Raw, n)
	}
	return r
}

// Kept returns r as a record keeps it: the text of an over-long answer
// (Oversize set) and the arguments of each over-long tool call cut to
// their first KeptAnswerBytes, at a UTF-8 boundary; the rest as it is.
// The runner scans an answer (Clip) before it cuts it so.
func (r Response) Kept() Response {
	cloned := false
	for i, c := range r.Calls {
		if c.Oversize > 0 && len(c.Arguments) > KeptAnswerBytes {
			if !cloned {
				r.Calls, cloned = slices.Clone(r.Calls), true
			}
			r.Calls[i].Arguments = textcut.Cut(c.Arguments, KeptAnswerBytes)
		}
	}
	if r.Oversize > 0 {
		r.Raw = textcut.Cut(r.Raw, KeptAnswerBytes)
	}
	return r
}

// bodyTap is the transport of a live actor. It reads each response body
// whole, up to a bound (twice the longest answer, plus room for the JSON
// around it), and hands the client a copy, so that no client reads more
// than that. A successful response over the bound is not handed on: the
// rest of its body is read (and dropped) through an answerScanner that
// finds the answer at path, and the round trip fails with a *tooLarge
// holding the answer's first bytes and its length, which the actor turns
// into an over-long answer (Response.Oversize). An error response over
// the bound is handed on cut short. The body of each successful response
// (its first bound bytes when it is longer) goes to the bodySlot of the
// request's context, when it has one (withBodySlot): the actor hands it
// on as Response.Body.
type bodyTap struct {
	next        http.RoundTripper
	limit       int64 // body bytes handed on
	answerLimit int64
	path        []string
}

// newBodyTap bounds bodies for answers of at most maxAnswer bytes
// (DefaultMaxAnswerBytes when not positive) found at path, and for bodies
// of at most maxBody bytes when maxBody is positive.
func newBodyTap(next http.RoundTripper, maxAnswer, maxBody int64, path ...string) *bodyTap {
	limit := bodyBound(maxAnswer)
	if maxBody > 0 {
		limit = min(limit, maxBody)
	}
	return &bodyTap{next: next, limit: limit, answerLimit: answerLimit(maxAnswer), path: path}
}

// bodySlot receives the body of the last successful response of the
// requests made with a context that carries it (withBodySlot). It is
// safe for concurrent use.
type bodySlot struct {
	mu   sync.Mutex
	body []byte
}

// bodySlotKey is the context key of a bodySlot.
type bodySlotKey struct{}

// withBodySlot returns ctx carrying a new bodySlot, which the bodyTap of
// the requests made with it (or a context derived from it) fills.
func withBodySlot(ctx context.Context) (context.Context, *bodySlot) {
	s := &bodySlot{}
	return context.WithValue(ctx, bodySlotKey{}, s), s
}

// put keeps b, the body of the last successful response.
func (s *bodySlot) put(b []byte) {
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

// get returns the body kept (nil when none was).
func (s *bodySlot) get() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body
}

// text returns the body kept, as text ("" when none was).
func (s *bodySlot) text() string { return string(s.get()) }

// tooLarge is a successful response whose body is over the tap's bound:
// Answer is the first bytes of the answer found in it (Found) and
// AnswerBytes its decoded length; BodyBytes is the body's length.
type tooLarge struct {
	Answer      []byte
	AnswerBytes int64
	Found       bool
	BodyBytes   int64
}

func (e *tooLarge) Error() string {
	return fmt.Sprintf("the response has %d bytes, more than this actor reads", e.BodyBytes)
}

// response is the over-long answer e stands for, for an answer limit of
// limit bytes: the answer itself when it is within the limit after all
// (its JSON was only long-winded; the usage figures are lost), else its
// first limit bytes (what the runner scans for leaks) and its length,
// or, when no answer could be found, the body's length. In the tools
// protocol (tools set) the answer is the tool calls as much as the text,
// so its length is the body's, whatever text was found; the text's start
// is kept all the same, as in the json protocol, so that what the actor
// sent is scanned for leaks the same way in both. The tool calls are
// not decoded: the body's start, Response.Body, is scanned for them.
func (e *tooLarge) response(limit int64, tools bool) Response {
	n := int(min(limit, int64(math.MaxInt)))
	switch {
	case tools && e.Found:
		return Response{Raw: textcut.Cut(string(e.Answer), n), Oversize: max(e.BodyBytes, e.AnswerBytes)}
	case tools:
		return Response{Oversize: e.BodyBytes}
	case e.Found && e.AnswerBytes <= limit:
		return Response{Raw: string(e.Answer)}
	case e.Found:
		return Response{Raw: textcut.Cut(string(e.Answer), n), Oversize: e.AnswerBytes}
	}
	return Response{Oversize: e.BodyBytes}
}

func (t *bodyTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(min(resp.ContentLength, t.limit+1)))
	}
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, t.limit+1)); err != nil {
		return nil, err
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	slot, _ := req.Context().Value(bodySlotKey{}).(*bodySlot)
	if int64(buf.Len()) <= t.limit {
		b := buf.Bytes()
		if ok && slot != nil {
			slot.put(b) // never written to: the client only reads its copy
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		return resp, nil
	}
	if !ok {
		// An error: its message is in the first part of the body.
		b := buf.Bytes()[:min(int64(buf.Len()), envelopeBytes)]
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		return resp, nil
	}
	sc := &answerScanner{path: t.path, keep: int(t.answerLimit)}
	sc.Write(buf.Bytes())
	size := int64(buf.Len())
	if slot != nil {
		slot.put(buf.Bytes()[:t.limit])
	}
	buf = bytes.Buffer{}
	n, err := io.Copy(sc, io.LimitReader(resp.Body, maxDrainBytes-size))
	if err != nil {
		return nil, err
	}
	return nil, &tooLarge{Answer: sc.text, AnswerBytes: sc.n, Found: sc.found, BodyBytes: size + n}
}

// answerScanner reads JSON text piecewise (Write) and decodes the string
// values at one path (member names and array indices, such as choices,
// 0, message, content) of each of its top-level values, without holding
// the text: it counts their decoded length (n), keeps their first keep
// bytes (text) and says whether one was found. It does not check the
// text: what is not JSON yields what it yields. Escapes are decoded as
// encoding/json decodes them (a lone surrogate is U+FFFD); other bytes
// are counted as they are.
type answerScanner struct {
	path  []string
	keep  int
	text  []byte
	n     int64
	found bool

	frames    []scanFrame // the open containers, up to len(path)+1
	depth     int         // how many containers are open
	inString  bool
	escaped   bool
	hexDigits int  // of a \u escape, read so far; -1 when not in one
	code      rune // the \u escape's value so far
	high      rune // a high surrogate waiting for its low half, or 0
	isKey     bool // the string is a member name
	target    bool // the string is at the path
	key       []byte
}

// scanFrame is one open container: an object, with the member whose
// value is being read, or an array, with the index.
type scanFrame struct {
	object  bool
	wantKey bool
	key     string
	index   int
}

// maxKeyBytes bounds the member names an answerScanner reads; a longer
// name matches no path.
const maxKeyBytes = 64

func (s *answerScanner) Write(p []byte) (int, error) {
	for _, c := range p {
		if s.inString {
			s.stringByte(c)
			continue
		}
		switch c {
		case '{', '[':
			if s.depth <= len(s.path) {
				s.frames = append(s.frames, scanFrame{object: c == '{', wantKey: c == '{'})
			}
			s.depth++
		case '}', ']':
			if s.depth > 0 {
				s.depth--
				if s.depth < len(s.frames) {
					s.frames = s.frames[:s.depth]
				}
			}
		case ',':
			if f := s.top(); f != nil {
				if f.object {
					f.wantKey = true
				} else {
					f.index++
				}
			}
		case ':':
			if f := s.top(); f != nil && f.object {
				f.wantKey = false
			}
		case '"':
			f := s.top()
			s.inString, s.escaped, s.hexDigits, s.high = true, false, -1, 0
			s.isKey = f != nil && f.object && f.wantKey
			s.key = s.key[:0]
			s.target = !s.isKey && s.atPath()
			s.found = s.found || s.target
		}
	}
	return len(p), nil
}

// top is the innermost open container, or nil at the top level or past
// the depth the path needs.
func (s *answerScanner) top() *scanFrame {
	if s.depth == 0 || s.depth > len(s.frames) {
		return nil
	}
	return &s.frames[s.depth-1]
}

// atPath reports whether a value starting now is at the path.
func (s *answerScanner) atPath() bool {
	if s.depth != len(s.path) || len(s.frames) != s.depth {
		return false
	}
	for i, f := range s.frames {
		if f.object && f.key != s.path[i] || !f.object && strconv.Itoa(f.index) != s.path[i] {
			return false
		}
	}
	return true
}

// stringByte reads one byte of a string.
func (s *answerScanner) stringByte(c byte) {
	switch {
	case s.hexDigits >= 0:
		s.code = s.code<<4 | rune(hexValue(c))
		if s.hexDigits++; s.hexDigits == 4 {
			s.hexDigits = -1
			s.escapedRune(s.code)
		}
		return
	case s.escaped:
		s.escaped = false
		if c == 'u' {
			s.hexDigits, s.code = 0, 0
			return
		}
		s.flushHigh()
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		s.emit(c)
		return
	}
	if c == '\\' {
		s.escaped = true // a high surrogate may wait for the \u after it
		return
	}
	s.flushHigh()
	switch c {
	case '"':
		s.inString = false
		if s.isKey {
			if f := s.top(); f != nil {
				f.key = string(s.key)
				if len(s.key) > maxKeyBytes {
					f.key = "\x00" // matches no path
				}
			}
		}
	default:
		s.emit(c)
	}
}

// escapedRune takes the value of a \u escape, pairing surrogates.
func (s *answerScanner) escapedRune(r rune) {
	switch {
	case r >= 0xd800 && r < 0xdc00:
		s.flushHigh()
		s.high = r
		return
	case r >= 0xdc00 && r < 0xe000 && s.high != 0:
		r = 0x10000 + (s.high-0xd800)<<10 + (r - 0xdc00)
		s.high = 0
	case r >= 0xdc00 && r < 0xe000:
		r = unicode.ReplacementChar
	default:
		s.flushHigh()
	}
	var b [utf8.UTFMax]byte
	for _, c := range b[:utf8.EncodeRune(b[:], r)] {
		s.emit(c)
	}
}

// flushHigh writes a high surrogate that found no low half as U+FFFD.
func (s *answerScanner) flushHigh() {
	if s.high == 0 {
		return
	}
	s.high = 0
	var b [utf8.UTFMax]byte
	for _, c := range b[:utf8.EncodeRune(b[:], unicode.ReplacementChar)] {
		s.emit(c)
	}
}

// emit adds one decoded byte to the string being read.
func (s *answerScanner) emit(c byte) {
	switch {
	case s.target:
		s.n++
		if len(s.text) < s.keep {
			s.text = append(s.text, c)
		}
	case s.isKey && len(s.key) <= maxKeyBytes:
		s.key = append(s.key, c)
	}
}

// hexValue is the value of a hex digit (0 for anything else).
func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 0
}

// ProviderError is a live actor's failure: the actor's spec and the
// cause. Its message is safe to print (textcut.OneLine), whatever the provider
// sent; errors.As and errors.Is see the cause (an *HTTPError, a refused
// connection). Body is the last successful response body read for the
// request (one that held no answer, or did not decode), "" when none
// was: the provider's output all the same, which the runner scans for
// leaks (ActorOutput) and does not record.
type ProviderError struct {
	Spec string
	Err  error
	Body string
}

func (e *ProviderError) Error() string { return e.Spec + ": " + textcut.OneLine(e.Err.Error()) }

// ActorOutput returns the body the provider sent with the failure.
func (e *ProviderError) ActorOutput() string { return e.Body }

func (e *ProviderError) Unwrap() error { return e.Err }
