package main

// The documentation's commands and links, held against the command itself:
// every `patchbench ...` line in a fenced block of README.md and docs/*.md
// (and every inline code span that starts with "patchbench ") names a
// command that exists and only flags that command has, as its -h output
// lists them; every relative link points to a file that exists and, with a
// #fragment into a Markdown file, to a heading that file has. The flags are
// read from the help text, not from the flag code, so the check holds
// whatever way a command declares its flags.
//
// Conventions the check relies on (docs/index.md says them too): a fenced
// block tagged sh, bash, shell or console holds shell commands; an untagged
// block holds synopses (a line that starts with "patchbench" is one, and
// an indented line starting with "[" continues it); output, JSON, YAML and
// Go go in blocks tagged text, json, yaml or go, which are not checked.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// docCommand is one patchbench command line found in a Markdown file.
type docCommand struct {
	file  string
	line  int
	words []string // the arguments after the patchbench word
	block bool     // from a shell block (an example, runnable as written)
}

func (c docCommand) String() string {
	return fmt.Sprintf("%s:%d: patchbench %s", c.file, c.line, strings.Join(c.words, " "))
}

// commandHelp is what a command's -h says: whether it exists and its flags.
type commandHelp struct {
	exists bool
	flags  map[string]bool
}

// helpSource gives a command's help text: its -h output and whether the
// command exists. The test uses the real command (realHelp); the checker's
// own tests use a fake.
type helpSource func(cmd string) (text string, ok bool)

func realHelp(cmd string) (string, bool) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{cmd, "-h"}, &out, &errb)
	return out.String() + errb.String(), code == exitOK && strings.Contains(out.String()+errb.String(), "Usage:")
}

// flagLine is a flag's line in the Flags section of a help text
// ("  -name type"); usageFlag a flag the Usage lines name ("--print").
var (
	flagLine  = regexp.MustCompile(`^  -([a-z0-9][a-z0-9-]*)(\s|$)`)
	usageFlag = regexp.MustCompile(`(?:^|[\s\[(|])--?([a-z][a-z0-9-]*)`)
)

// parseHelp reads the flags of a help text: the Flags section's flags, the
// flags its Usage lines name, -h and -help, and, when the usage says
// "[run flags]", the run command's flags (from runFlags).
func parseHelp(text string, runFlags func() map[string]bool) map[string]bool {
	flags := map[string]bool{"h": true, "help": true}
	section := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "Usage:"):
			section = "usage"
			continue
		case strings.HasPrefix(l, "Flags"):
			section = "flags"
			continue
		case strings.HasPrefix(l, "Examples:"):
			section = "examples"
			continue
		}
		switch section {
		case "flags":
			if m := flagLine.FindStringSubmatch(l); m != nil {
				flags[m[1]] = true
			}
		case "usage":
			for _, m := range usageFlag.FindAllStringSubmatch(l, -1) {
				flags[m[1]] = true
			}
			if strings.Contains(l, "[run flags]") && runFlags != nil {
				for f := range runFlags() {
					flags[f] = true
				}
			}
		}
	}
	return flags
}

// docChecker checks commands against the help of a helpSource.
type docChecker struct {
	help  helpSource
	mu    sync.Mutex
	cache map[string]commandHelp
}

func newDocChecker(h helpSource) *docChecker {
	return &docChecker{help: h, cache: map[string]commandHelp{}}
}

func (d *docChecker) command(name string) commandHelp {
	d.mu.Lock()
	if h, ok := d.cache[name]; ok {
		d.mu.Unlock()
		return h
	}
	d.mu.Unlock()
	text, ok := d.help(name)
	h := commandHelp{exists: ok}
	if ok {
		h.flags = parseHelp(text, func() map[string]bool { return d.command("run").flags })
	}
	d.mu.Lock()
	d.cache[name] = h
	d.mu.Unlock()
	return h
}

// topLevel are the words patchbench takes in place of a command.
var topLevel = map[string]bool{"help": true, "-h": true, "-help": true, "--help": true, "--version": true, "-version": true}

// placeholder reports whether a command word stands for any command
// ("<command>", "CMD").
func placeholder(w string) bool {
	return strings.HasPrefix(w, "<") || w == strings.ToUpper(w)
}

// flagName is the flag a word names ("--out=DIR" → "out"), or "".
func flagName(w string) string {
	w = strings.TrimLeft(w, "[(")
	w = strings.TrimRight(w, "]),.")
	w = strings.TrimSuffix(w, "...")
	w = strings.TrimRight(w, "])")
	if !strings.HasPrefix(w, "-") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
	if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(name) {
		return ""
	}
	return name
}

// check returns what is wrong with one command line: an unknown command,
// or a flag the command does not have.
func (d *docChecker) check(c docCommand) []string {
	if len(c.words) == 0 {
		return nil
	}
	name := c.words[0]
	if topLevel[name] {
		return nil
	}
	if placeholder(name) {
		return nil
	}
	h := d.command(name)
	if !h.exists {
		return []string{fmt.Sprintf("%v: no command %q (patchbench help lists them)", c, name)}
	}
	var bad []string
	for _, w := range c.words[1:] {
		if f := flagName(w); f != "" && !h.flags[f] {
			bad = append(bad, fmt.Sprintf("%v: patchbench %s has no flag --%s (patchbench %s -h lists them)", c, name, f, name))
		}
	}
	return bad
}

// docShellWords splits a shell line into words and operators, as sh would
// for the purpose here: quotes and backslashes bind, an unquoted # at the
// start of a word starts a comment, and |, ;, &, < and > make operator
// words of their own ("|", "&&", ">", ...), marked by a leading NUL.
func docShellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in := false // a word is being built
	quote := rune(0)
	flush := func() {
		if in {
			words = append(words, cur.String())
			cur.Reset()
			in = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' && i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == '#' && !in:
			flush()
			return words
		case unicode.IsSpace(r):
			flush()
		case strings.ContainsRune("|;&<>", r):
			flush()
			op := string(r)
			for i+1 < len(rs) && strings.ContainsRune("|;&<>", rs[i+1]) {
				i++
				op += string(rs[i])
			}
			words = append(words, "\x00"+op)
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	flush()
	return words
}

// invocations finds the patchbench commands of a shell line: each
// segment between |, ;, && and || whose command word (after VAR=value
// assignments) is patchbench, ./patchbench, a path ending in /patchbench,
// or "go run ./cmd/patchbench". Redirection targets are dropped.
func invocations(line string) [][]string {
	var out [][]string
	var seg []string
	end := func() {
		i := 0
		for i < len(seg) && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(seg[i]) {
			i++
		}
		s := seg[i:]
		switch {
		case len(s) > 0 && (s[0] == "patchbench" || strings.HasSuffix(s[0], "/patchbench") && !strings.HasSuffix(s[0], "cmd/patchbench")):
			out = append(out, s[1:])
		case len(s) > 2 && s[0] == "go" && s[1] == "run" && strings.TrimSuffix(s[2], "/") == "./cmd/patchbench":
			out = append(out, s[3:])
		}
		seg = nil
	}
	words := docShellWords(line)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "\x00") {
			seg = append(seg, w)
			continue
		}
		if strings.ContainsAny(w, "<>") {
			if len(seg) > 0 && (seg[len(seg)-1] == "2" || seg[len(seg)-1] == "1") {
				seg = seg[:len(seg)-1]
			}
			i++ // the target
			continue
		}
		end()
	}
	end()
	return out
}

var (
	fence      = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z0-9_-]*)")
	inlineCode = regexp.MustCompile("`([^`]+)`")
	mdLink     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	shellInfo  = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// docCommands extracts the patchbench commands of a Markdown text.
func docCommands(file, md string) []docCommand {
	var out []docCommand
	lines := strings.Split(md, "\n")
	inFence, info, marker := false, "", ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := fence.FindStringSubmatch(l); m != nil {
			if !inFence {
				inFence, info, marker = true, m[2], m[1]
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(l), marker) && strings.TrimSpace(l) == strings.Repeat(marker[:1], len(strings.TrimSpace(l))) {
				inFence = false
				continue
			}
		}
		start := i + 1
		switch {
		case inFence && shellInfo[info]:
			for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
				i++
				l = strings.TrimSuffix(l, "\\") + " " + lines[i]
			}
			for _, w := range invocations(l) {
				out = append(out, docCommand{file: file, line: start, words: w, block: true})
			}
		case inFence && info == "":
			t := strings.TrimSpace(l)
			if !strings.HasPrefix(t, "patchbench ") && t != "patchbench" {
				continue
			}
			for i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "[") && strings.HasPrefix(lines[i+1], " ") {
				i++
				t += " " + strings.TrimSpace(lines[i])
			}
			out = append(out, docCommand{file: file, line: start, words: strings.Fields(t)[1:]})
		case !inFence:
			for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
				if strings.HasPrefix(m[1], "patchbench ") || strings.HasPrefix(m[1], "go run ./cmd/patchbench ") {
					for _, w := range invocations(m[1]) {
						out = append(out, docCommand{file: file, line: start, words: w})
					}
				}
			}
		}
	}
	return out
}

// anchors are the fragment ids GitHub gives a Markdown file's headings:
// the heading's text in lower case, without punctuation but - and _,
// spaces made hyphens, a repeated one suffixed -1, -2, ...
func anchors(md string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, l := range strings.Split(md, "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		t := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(t, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(t)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			seen[id]++
			id = fmt.Sprintf("%s-%d", id, n)
		} else {
			seen[id] = 1
		}
		ids[id] = true
	}
	return ids
}

// checkLinks returns the relative links of file (a Markdown text md) that
// point to nothing: a missing file, or a #fragment no heading has. read
// reads another file (nil error when it exists).
func checkLinks(file, md string, read func(path string) (string, error)) []string {
	var bad []string
	for n, l := range proseLines(md) {
		l = inlineCode.ReplaceAllString(l, "``")
		for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			text := md
			if path != "" {
				p := filepath.Join(filepath.Dir(file), path)
				t, err := read(p)
				if err != nil {
					bad = append(bad, fmt.Sprintf("%s:%d: link %s: %s does not exist", file, n+1, target, p))
					continue
				}
				text = t
			}
			if frag != "" && (path == "" || strings.HasSuffix(path, ".md")) && !anchors(text)[frag] {
				bad = append(bad, fmt.Sprintf("%s:%d: link %s: no heading with the id %q", file, n+1, target, frag))
			}
		}
	}
	return bad
}

// readDoc reads a file; a directory reads as "".
func readDoc(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", nil
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// docFiles are README.md, bench/README.md and the Markdown pages under
// docs/, relative to the repository's root (../..).
func docFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "bench", "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsCommands checks every patchbench command of README.md and
// docs/ against the command's -h, and every inline `--flag` of those
// pages against the flags of some command.
func TestDocsCommands(t *testing.T) {
	d := newDocChecker(realHelp)
	all := map[string]bool{}
	for name := range commands {
		for f := range d.command(name).flags {
			all[f] = true
		}
	}
	found := 0
	for _, file := range docFiles(t) {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cmds := docCommands(file, string(md))
		found += len(cmds)
		for _, c := range cmds {
			for _, p := range d.check(c) {
				t.Error(p)
			}
		}
		for _, p := range inlineFlags(file, string(md), all) {
			t.Error(p)
		}
	}
	if found < 100 {
		t.Errorf("only %d patchbench commands found in the docs", found)
	}
}

// inlineFlags returns the inline code spans of md that name a --flag that
// no command has (prose such as "`--max-turns` (16)").
func inlineFlags(file, md string, all map[string]bool) []string {
	var bad []string
	for n, l := range proseLines(md) {
		for _, m := range inlineCode.FindAllStringSubmatch(l, -1) {
			w := strings.Fields(m[1])
			if len(w) == 0 || !strings.HasPrefix(w[0], "--") {
				continue
			}
			if f := flagName(w[0]); f != "" && !all[f] && !topLevel["--"+f] {
				bad = append(bad, fmt.Sprintf("%s:%d: `%s`: no command has --%s", file, n+1, m[1], f))
			}
		}
	}
	return bad
}

// TestDocsLinks checks the relative links of README.md and docs/.
func TestDocsLinks(t *testing.T) {
	for _, file := range docFiles(t) {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range checkLinks(file, string(md), readDoc) {
			t.Error(p)
		}
	}
}

// TestDocsExamplesRun runs the documented examples that need nothing but
// the repository: the view, verify, validate, cases, footprint and plan
// commands of shell blocks whose arguments hold no placeholder (a word in
// capitals, a file the example only names). Each must end with exit
// status 0 or 1, never 2 (bad usage or input).
func TestDocsExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	runnable := map[string]bool{"view": true, "verify": true, "validate": true, "cases": true, "footprint": true, "plan": true}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var todo []docCommand
	for _, file := range docFiles(t) {
		md, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docCommands(file, string(md)) {
			if c.block && len(c.words) > 0 && runnable[c.words[0]] && filesExist(root, c.words[1:]) {
				todo = append(todo, c)
			}
		}
	}
	t.Chdir(root)
	ran := 0
	for _, c := range todo {
		if slices.Contains(c.words, "--out") || slices.Contains(c.words, "-") {
			continue // writes a file, or reads standard input
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), c.words, &out, &errb)
		ran++
		t.Logf("%v: exit %d", c, code)
		if code != exitOK && code != exitNegative {
			t.Errorf("%v: exit %d\n%s", c, code, errb.String())
		}
	}
	if ran < 3 {
		t.Errorf("only %d examples ran", ran)
	}
}

// filesExist reports whether an example's arguments are real: no word in
// capitals (a placeholder such as FILE or KEY), and every argument that
// looks like a path (it has a / or a file extension) exists under root.
func filesExist(root string, words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			continue
		}
		if regexp.MustCompile(`[A-Z]{2,}`).MatchString(w) && !strings.Contains(w, "/") {
			return false
		}
		if strings.Contains(w, "/") || regexp.MustCompile(`\.(json|ya?ml)$`).MatchString(w) {
			if _, err := os.Stat(filepath.Join(root, w)); err != nil {
				return false
			}
		}
	}
	return true
}

// The checker itself: a misspelled flag, an unknown command, a missing
// file and a missing heading are each caught; the real commands and links
// pass.
func TestDocChecker(t *testing.T) {
	help := func(cmd string) (string, bool) {
		switch cmd {
		case "verify":
			return "Usage:\n  patchbench verify (--state FILE | --case ID) --patch FILE\n\nFlags (-name and --name both work):\n  -state file\n    \tthe state\n  -case id\n    \tthe case\n  -patch file\n    \tthe patch\n  -gates list\n    \tthe gates\n\nExamples:\n  patchbench verify --bogus\n", true
		case "run":
			return "Usage:\n  patchbench run [flags]\n\nFlags:\n  -rounds n\n    \tn rounds\n", true
		case "plan":
			return "Usage:\n  patchbench plan --print [run flags] | patchbench plan FILE\n\nFlags (-name and --name both work):\n\n", true
		}
		return "", false
	}
	tests := []struct {
		name, md string
		bad      int
	}{
		{"shell block", "```sh\npatchbench verify --state s.json --patch p.json --gates none\n```\n", 0},
		{"misspelled flag", "```sh\npatchbench verify --stat s.json --patch p.json\n```\n", 1},
		{"misspelled flag with =", "```sh\n./patchbench verify --gate=none --patch p.json\n```\n", 1},
		{"an example's flag is no flag", "```sh\npatchbench verify --bogus\n```\n", 1},
		{"unknown command", "```sh\ngo run ./cmd/patchbench verfy --state s.json\n```\n", 1},
		{"continued line", "```sh\nOPENAI_API_KEY=x patchbench verify --state s.json \\\n  --patchh p.json   # a comment --nothing\n```\n", 1},
		{"pipe and redirection", "```sh\necho '[]' | patchbench verify --patch - --state s.json > out.txt 2>&1 && patchbench run --round 3\n```\n", 1},
		{"quoted value", "```bash\npatchbench run --rounds 1 --actor 'exec:python3 agent.py --model small'\n```\n", 1},
		{"synopsis", "```\npatchbench verify [--state FILE] [--patch FILE]\n           [--gatez LIST]\n```\n", 1},
		{"synopsis with alternatives", "```\npatchbench verify (--state FILE | --case ID) [--gates scope|none]\n```\n", 0},
		{"output block", "```text\npatchbench verify: --nonsense\n```\n", 0},
		{"inline span", "Try `patchbench verify --state s.json --phaze x`.\n", 1},
		{"usage flag and run flags", "```sh\npatchbench plan --print --rounds 3\npatchbench plan --print --roundz 3\n```\n", 1},
		{"placeholder", "```\npatchbench <command> [flags]\n```\n", 0},
		{"go build is not a command", "```sh\ngo build -o patchbench ./cmd/patchbench\n```\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDocChecker(help)
			var bad []string
			for _, c := range docCommands("x.md", tc.md) {
				bad = append(bad, d.check(c)...)
			}
			if len(bad) != tc.bad {
				t.Errorf("%d problems, want %d: %q", len(bad), tc.bad, bad)
			}
		})
	}

	files := map[string]string{
		"docs/a.md": "# Page A\n\n## The `patchbench run` command\n\nSee [b](b.md#section-two), [c](c.md), [top](#page-a) and [run](#the-patchbench-run-command).\n",
		"docs/b.md": "# B\n\n## Section two\n\n```sh\n# not a heading\n```\n",
	}
	read := func(p string) (string, error) {
		if s, ok := files[filepath.ToSlash(p)]; ok {
			return s, nil
		}
		return "", os.ErrNotExist
	}
	got := checkLinks("docs/a.md", files["docs/a.md"], read)
	if len(got) != 1 || !strings.Contains(got[0], "c.md") {
		t.Errorf("links: %q, want the missing c.md only", got)
	}
	got = checkLinks("docs/x.md", "[b](b.md#section-3) [a](a.md#not-a-heading) [b](b.md#not-a-heading) `[code](nowhere.md)`\n", read)
	if len(got) != 3 {
		t.Errorf("links: %q, want 3 problems", got)
	}

	all := map[string]bool{"rounds": true}
	if got := inlineFlags("x.md", "`--rounds 3` and `--roundz` and `-x`\n", all); len(got) != 1 {
		t.Errorf("inline flags: %q, want the one --roundz", got)
	}
}

// proseLines yields the lines of a Markdown text outside fenced code
// blocks, with their index from 0.
func proseLines(md string) func(yield func(int, string) bool) {
	return func(yield func(int, string) bool) {
		inFence := false
		for n, l := range strings.Split(md, "\n") {
			if fence.MatchString(l) {
				inFence = !inFence
				continue
			}
			if !inFence && !yield(n, l) {
				return
			}
		}
	}
}
