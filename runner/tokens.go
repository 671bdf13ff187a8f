package runner

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// counter counts tokens with a tiktoken encoding. Counts are memoised by
// the SHA-256 of the text counted (a bounded cache shared by every run of
// the process, see sharedCounter, safe for concurrent use): most of what
// a benchmark counts is the same prompts and views again, across actors,
// rounds and the full-state configurations, and a process that runs the
// same suite again (the tests, in-process commands) counts it once.
//
// For the encodings whose pre-tokenizer never joins a line feed to the
// printable character after it (o200k_base and cl100k_base; see
// splitPoint), a text is counted as the sum of its pieces split at such
// places, each memoised: the same figure as counting it whole, and a view
// is then tokenized once though it is counted alone (the step's
// view_tokens) and inside its prompt.
type counter struct {
	codec  tokenizer.Codec
	source string
	split  bool // the encoding's counts add up over splitPoint pieces

	mu   sync.Mutex
	memo map[[sha256.Size]byte]int
}

// maxMemo bounds the counter's memo (entries of 40 bytes and the map's
// overhead: a few MiB): when it is full it starts again empty.
const maxMemo = 1 << 16

// Tokenizers lists the tiktoken encodings the runner can count with.
var Tokenizers = []string{
	string(tokenizer.O200kBase), string(tokenizer.Cl100kBase), string(tokenizer.P50kBase),
	string(tokenizer.P50kEdit), string(tokenizer.R50kBase),
}

// CheckTokenizer reports whether name is an encoding the runner knows.
func CheckTokenizer(name string) error {
	_, err := newCounter(name)
	return err
}

// counters holds the process's counter of each encoding (name to
// *counter), made by sharedCounter on first use.
var counters sync.Map

// sharedCounter returns the process's counter of the encoding name (""
// is o200k_base), made on first use: a text's count depends only on the
// text and the encoding, so every Run shares the memo. The error is
// newCounter's, for a name that is no known encoding.
func sharedCounter(name string) (*counter, error) {
	if name == "" {
		name = string(tokenizer.O200kBase)
	}
	if c, ok := counters.Load(name); ok {
		return c.(*counter), nil
	}
	c, err := newCounter(name)
	if err != nil {
		return nil, err
	}
	shared, _ := counters.LoadOrStore(name, c)
	return shared.(*counter), nil
}

// newCounter returns a counter of the encoding name ("" is o200k_base)
// with an empty memo of its own, or an error naming the known encodings.
func newCounter(name string) (*counter, error) {
	if name == "" {
		name = string(tokenizer.O200kBase)
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w (known: %s)", name, err, strings.Join(Tokenizers, ", "))
	}
	split := name == string(tokenizer.O200kBase) || name == string(tokenizer.Cl100kBase)
	return &counter{codec: codec, source: "tokenizer:" + name, split: split, memo: map[[sha256.Size]byte]int{}}, nil
}

// count returns the number of tokens in s: the encoding's count of the
// whole text (0 when the encoding fails on it).
func (c *counter) count(s string) int {
	if !c.split {
		return c.piece(s)
	}
	n := 0
	for len(s) > 0 {
		i := splitPoint(s)
		n += c.piece(s[:i])
		s = s[i:]
	}
	return n
}

// countPast counts the tokens of s as count does, but stops once they
// pass limit: it returns the count when it is at most limit, and some
// figure above limit otherwise (a budget's check need not tokenize the
// rest of a long text). s is counted in pieces cut at splitPoint within
// pastChunk bytes, or else at the first indentBreak after pastChunk
// (an indented JSON view has no split point of splitPoint's below its
// first level), so that counting stops within about a chunk of the
// limit whatever the text's shape.
func (c *counter) countPast(s string, limit int) int {
	if !c.split {
		return c.piece(s)
	}
	n := 0
	for len(s) > 0 && n <= limit {
		// A split point within the next chunk, else the first indented
		// line after it: splitPoint is not asked to read a long text
		// that has none to its end.
		w := min(len(s), pastChunk+1)
		i := splitPoint(s[:w])
		if i == w && w < len(s) {
			i = indentBreak(s, pastChunk)
		}
		n += c.piece(s[:i])
		s = s[i:]
	}
	return n
}

// pastChunk is the size countPast counts a long piece in, in bytes: a
// piece of its own in the memo each (a variable so that a test can make
// it small).
var pastChunk = 16 << 10

// indentBreak returns the first place in s at or after from that is just
// after a line feed followed by one or more spaces and then a printable
// ASCII character other than a space (an indented line's start), or
// len(s). In the o200k_base and cl100k_base patterns no pre-token holds
// such a line feed and the spaces after it: a pre-token that takes a
// line feed (`[^\s\p{L}\p{N}]+[\r\n/]*` and `\s*[\r\n]+`, the latter tried
// before `\s+(?!\S)` and `\s+`, and which ends at the last line feed of
// its run of white space) stops at it when a space follows, and the
// spaces start the next one. The count of s is then the sum of the counts
// of the parts, as at splitPoint; TestCountPastChunks checks it.
func indentBreak(s string, from int) int {
	for i := max(from, 1); i < len(s); i++ {
		if s[i-1] != '\n' || s[i] != ' ' {
			continue
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j < len(s) && s[j] > ' ' && s[j] < 0x7f {
			return i
		}
	}
	return len(s)
}

// splitPoint returns the end of the first piece of s: just after the first
// line feed followed by a printable ASCII character other than a space and
// '/', or len(s). In the o200k_base and cl100k_base patterns no
// pre-token holds a line feed and the character after it then: only the
// alternatives `[^\s\p{L}\p{N}]+[\r\n/]*`, `\s*[\r\n]+`, `\s+(?!\S)` and
// `\s+` match a line feed, and none goes on into such a character. The
// pre-tokens (and so the tokens) of the text are then those of the piece
// before and of the rest, counted apart: at the end of the piece the
// whitespace run ends in the line feed, which `\s*[\r\n]+` takes before
// `\s+(?!\S)` looks past it, as it does within the whole text. TestCountSplit
// checks the sums against whole counts.
func splitPoint(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\n' {
			if b := s[i+1]; b > ' ' && b < 0x7f && b != '/' {
				return i + 1
			}
		}
	}
	return len(s)
}

// piece counts s whole, through the memo.
func (c *counter) piece(s string) int {
	key := sha256.Sum256([]byte(s))
	c.mu.Lock()
	n, ok := c.memo[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	n, err := c.codec.Count(s)
	if err != nil {
		n = 0
	}
	c.mu.Lock()
	if len(c.memo) >= maxMemo {
		clear(c.memo)
	}
	c.memo[key] = n
	c.mu.Unlock()
	return n
}
