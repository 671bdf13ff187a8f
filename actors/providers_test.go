package actors

import (
	"slices"
	"testing"
)

func TestProviders(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"reference", nil},
		{"openai:gpt-5-mini", []string{"openai"}},
		{"analyst=ollama:mistral,reviewer=anthropic:claude-x,openai:m", []string{"anthropic", "ollama", "openai"}},
	} {
		as, err := Build([]string{tc.spec}, BuildOptions{Params: Params{OpenAIBaseURL: "http://127.0.0.1:1/v1", AnthropicBaseURL: "http://127.0.0.1:1"}, CacheDir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := Providers(as[0]); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: providers %v, want %v", tc.spec, got, tc.want)
		}
	}
}
