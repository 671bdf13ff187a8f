package runner

import (
	"fmt"
	"strings"

	"github.com/tiktoken-go/tokenizer"
)

// counter counts tokens with a tiktoken encoding.
type counter struct {
	codec  tokenizer.Codec
	source string
}

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

func newCounter(name string) (*counter, error) {
	if name == "" {
		name = string(tokenizer.O200kBase)
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w (known: %s)", name, err, strings.Join(Tokenizers, ", "))
	}
	return &counter{codec: codec, source: "tokenizer:" + name}, nil
}

func (c *counter) count(s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		return 0
	}
	return n
}
