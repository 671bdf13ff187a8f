package bench

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/patchbench/patchbench/internal/regularfile"
	"github.com/patchbench/patchbench/runtime"
	"go.yaml.in/yaml/v3"
)

func TestYAMLToJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`a: 1`, `{"a":1}`},
		{`big: 123456789012345678901234567890`, `{"big":123456789012345678901234567890}`},
		{`x: 1.50`, `{"x":1.50}`},
		{`hex: 0x1F`, `{"hex":31}`},
		{`plus: +5`, `{"plus":5}`},
		{`f: 1e3`, `{"f":1e3}`},
		{`n: null`, `{"n":null}`},
		{`t: ~`, `{"t":null}`},
		{`b: true`, `{"b":true}`},
		{`s: "01"`, `{"s":"01"}`},
		{`d: 2026-01-02`, `{"d":"2026-01-02"}`},
		{`l: [1, "two", {k: v}]`, `{"l":[1,"two",{"k":"v"}]}`},
		{`1: one`, `{"1":"one"}`},
		{"a: &x {k: 1}\nb: *x", `{"a":{"k":1},"b":{"k":1}}`},
		{`[1, 2]`, `[1,2]`},
		{`"scalar"`, `"scalar"`},
		{`big: 1e400`, `{"big":1e400}`},
		{`q: "1e400"`, `{"q":"1e400"}`},
		{`t: !!str 1e400`, `{"t":"1e400"}`},
		{`huge: 1` + strings.Repeat("0", 400), `{"huge":1` + strings.Repeat("0", 400) + `}`},
	}
	for _, tt := range tests {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tt.in), &n); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		v, err := YAMLToJSON(&n)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		b, _ := json.Marshal(v)
		if string(b) != tt.want {
			t.Errorf("%s => %s, want %s", tt.in, b, tt.want)
		}
	}
	for _, bad := range []string{"x: .inf", "x: .nan", "x: !!binary aGVsbG8=", "? [a]\n: 1", "a: &x {k: 1}\nb:\n  <<: *x"} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(bad), &n); err != nil {
			continue
		}
		if _, err := YAMLToJSON(&n); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %v, want one naming the line", bad, err)
		}
	}
}

func TestYAMLAliasBomb(t *testing.T) {
	// Eight levels of ten aliases each expand to 10^8 nodes; whichever
	// layer refuses it, the contract must be refused quickly.
	src := "view: {include: [/a]}\nschema:\n  $defs:\n    a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		src += "    " + name + ": &" + name + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", ") + "]\n"
		prev = name
	}
	_, err := ParseContract("bomb.yaml", []byte(src))
	if err == nil {
		t.Fatal("an alias expansion to 10^8 nodes must be refused")
	}
	t.Log(err)
}

// TestContractAliasBudget: aliases spread over many output_schema
// entries share one node budget.
func TestContractAliasBudget(t *testing.T) {
	src := "view: {include: [/a]}\noutput_schema:\n  /a/0: &a {enum: [" + strings.Repeat("1,", 999) + "1]}\n"
	for i := 1; i < 1200; i++ {
		src += "  /a/" + strconv.Itoa(i) + ": {allOf: [*a, *a]}\n"
	}
	_, err := ParseContract("bomb.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("error %v; want the node budget to stop the expansion", err)
	}
}

func TestParseContract(t *testing.T) {
	good := `
view: {include: [/a], exclude: [/a/secret]}
write: [/a/x]
source: [/a]
phases: [draft]
schema:
  type: object
  properties:
    a: {type: object, properties: {n: {maximum: 12345678901234567890}}}
output_schema:
  /a/x: {type: string}
invariants:
  - {name: keep, rule: "size(post.a) >= 1"}
limits: {max_ops: 5, max_work_ms: 2000}
`
	c, err := ParseContract("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits().MaxOps != 5 || c.Limits().MaxWorkMS != 2000 || c.Limits().MaxDepth != runtime.DefaultLimits.MaxDepth {
		t.Errorf("limits %+v", c.Limits())
	}
	if got := c.Write().String(); got != "[/a/x]" {
		t.Errorf("write %s", got)
	}
	// The same contract as JSON.
	js := `{"view": {"include": ["/a"]}, "write": ["/a/x"], "phases": ["draft"], "schema": {"type": "object"}}`
	if _, err := ParseContract("c.json", []byte(js)); err != nil {
		t.Errorf("JSON contract: %v", err)
	}
	tests := []struct {
		name, src, file string
		line            int
		contains        string
	}{
		{"unknown key", "view: {include: [/a]}\nwirte: [/a]\n", "c.yaml", 2, `unknown key "wirte" (known keys: view, write, source,`},
		{"unknown limit", "view: {include: [/a]}\nlimits: {max_opps: 3}\n", "c.yaml", 2, `unknown key "max_opps"`},
		{"fractional limit", "view: {include: [/a]}\nlimits: {max_ops: 1.5}\n", "c.yaml", 2, "max_ops must be a non-negative integer"},
		{"two documents", "view: {include: [/a]}\n---\nwrite: [/b]\n", "c.yaml", 0, "more than one YAML document"},
		{"invalid UTF-8", "view: {include: [/a]}\nwrite: [\"/\xff\"]\n", "c.yaml", 2, "invalid UTF-8"},
		{"duplicate key in flow style", `{"view": {"include": ["/a"]}, "write": ["/a"], "write": ["/b"]}`, "c.yaml", 1, `mapping key "write" already defined`},
		{"JSON with a trailing comma", `{"view": {"include": ["/a"],}}`, "c.json", 0, "line 1, column 29"},
		{"unknown nested key", "view:\n  include: [/a]\n  hide: [/b]\n", "c.yaml", 3, "hide"},
		{"wrong type", "view: {include: [/a]}\nwrite: /a\n", "c.yaml", 2, "write"},
		{"duplicate key", "view: {include: [/a]}\nwrite: [/a]\nwrite: [/b]\n", "c.yaml", 3, "already defined"},
		{"bad pattern", "view: {include: [/a]}\nwrite:\n  - /a\n  - b\n", "c.yaml", 4, "write[1]"},
		{"bad schema", "view: {include: [/a]}\nschema:\n  type: 5\n", "c.yaml", 3, "schema: the schema is not valid against metaschema"},
		{"bad rule", "view: {include: [/a]}\ninvariants:\n  - name: r\n    rule: \"1 +\"\n", "c.yaml", 4, "invariants[0].rule"},
		{"no view", "write: [/a]\n", "c.yaml", 0, "view.include"},
		{"empty", "", "c.yaml", 0, "empty contract"},
		{"infinite limit", "view: {include: [/a]}\nschema: {maximum: .inf}\n", "c.yaml", 0, "no JSON form"},
	}
	for _, tt := range tests {
		_, err := ParseContract(tt.file, []byte(tt.src))
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a FileError", tt.name, err)
			continue
		}
		if fe.File != tt.file || (tt.line > 0 && fe.Line != tt.line) || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("%s: %v (line %d), want line %d and %q", tt.name, err, fe.Line, tt.line, tt.contains)
		}
	}
}

// TestLoadContractFileBounded checks that a contract file is read only
// when it is a regular file of at most MaxContractFileBytes: --contract
// /dev/zero grew view and verify without end, a 64 MB one took 6.3 GB and
// a FIFO blocked.
func TestLoadContractFileBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte("["+strings.Repeat("0,", MaxContractFileBytes/2)+"0]"), 0o644); err != nil {
		t.Fatal(err)
	}
	var tooLarge *regularfile.TooLargeError
	if _, err := LoadContractFile(big); !errors.As(err, &tooLarge) {
		t.Errorf("a contract of %d bytes: %v, want a *TooLargeError", MaxContractFileBytes+2, err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	var notRegular *regularfile.NotRegularError
	for _, p := range []string{fifo, "/dev/zero"} {
		if _, err := LoadContractFile(p); !errors.As(err, &notRegular) {
			t.Errorf("%s: %v, want a *NotRegularError", p, err)
		}
	}
}
