package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/testenv"
)

// runOK runs patchbench with args and fails the test unless it exits 0.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCLI(t, cliCase{args: args})
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// copyRunDir copies a run directory, with every "from" in its manifest and
// runs.jsonl replaced by "to" (an actor renamed, a setting changed).
func copyRunDir(t *testing.T, src, dst, from, to string) string {
	t.Helper()
	os.MkdirAll(dst, 0o755)
	for _, f := range []string{"manifest.json", "runs.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dst, f), bytes.ReplaceAll(b, []byte(from), []byte(to)), 0o644)
	}
	return dst
}

// TestReportSeveralDirectories: directories of different actors read as
// one comparison; the same actor in two directories that hold the same
// runs named with its directory; directories of another case set or
// prompt template refused with the difference named; a run without the
// baseline configuration reported with the paired tests skipped.
func TestReportSeveralDirectories(t *testing.T) {
	tmp := t.TempDir()
	ref, over, refAgain, noBase := filepath.Join(tmp, "ref"), filepath.Join(tmp, "over"), filepath.Join(tmp, "ref-again"), filepath.Join(tmp, "no-base")
	runOK(t, "run", "--cases", exampleCases, "--out", ref, "--actor", "reference")
	runOK(t, "run", "--cases", exampleCases, "--out", over, "--actor", "oversharer", "--config", "unconstrained,patchoptic")
	runOK(t, "run", "--cases", exampleCases, "--out", refAgain, "--actor", "reference", "--config", "patchoptic")
	runOK(t, "run", "--cases", exampleCases, "--out", noBase, "--actor", "reference", "--config", "unconstrained,view-only")

	// Another case set: the example with one check edited.
	cases := filepath.Join(tmp, "cases", "support")
	os.MkdirAll(cases, 0o755)
	example, _ := os.ReadFile(exampleCases + "/support/sup-example-refund.yaml")
	os.WriteFile(filepath.Join(cases, "sup-example-refund.yaml"), bytes.Replace(example, []byte(`contains_all: ["refund", "42.50"]`), []byte(`contains_all: ["refund"]`), 1), 0o644)
	edited := filepath.Join(tmp, "edited")
	runOK(t, "run", "--cases", filepath.Join(tmp, "cases"), "--out", edited, "--actor", "reference", "--config", "patchoptic")
	prompt := copyRunDir(t, refAgain, filepath.Join(tmp, "prompt3"), `"prompt_version": "patchbench-prompt/2`, `"prompt_version": "patchbench-prompt/3`)

	checkCLI(t, []cliCase{
		{name: "two actors run apart, as one comparison", args: []string{"report", ref, over, "--table", "main,mcnemar"}, golden: "report-two-dirs"},
		{name: "markdown of two directories", args: []string{"report", ref, over, "--format", "markdown", "--table", "main"}, golden: "report-two-dirs-markdown"},
		{name: "no baseline configuration", args: []string{"report", noBase}, golden: "report-no-baseline"},
		{name: "a baseline among those present, by label", args: []string{"report", noBase, "--baseline", "View Only", "--table", "mcnemar"}, golden: "report-baseline-view-only"},
		{name: "another case set", args: []string{"report", ref, edited}, exit: 2,
			stderr: []string{"cannot be read as one comparison: case_digest differ", ref, edited}},
		{name: "another prompt template", args: []string{"report", ref, prompt}, exit: 2,
			stderr: []string{"prompt_version differ (prompt template patchbench-prompt/2+", " against patchbench-prompt/3+"}},
		{name: "a directory twice", args: []string{"report", ref, ref}, exit: 2, stderr: []string{"is given twice"}},
	})
	// The same actor in two directories that hold the same run: each is
	// named with its directory.
	stdout := runOK(t, "report", ref, refAgain, "--format", "csv")
	for _, want := range []string{"patchoptic,PatchOptic,projected,reference@ref,1,", "patchoptic,PatchOptic,projected,reference@ref-again,1,", "unconstrained,Unconstrained,full,reference@ref,1,"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
}

// TestReportPaperLive: with a live model, each of the paper's model
// figures is measured, with the model, rounds and settings that produced
// it.
func TestReportPaperLive(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "run")
	runOK(t, "run", "--cases", exampleCases, "--out", out, "--actor", "oversharer", "--rounds", "2")
	live := copyRunDir(t, out, filepath.Join(tmp, "gpt"), "oversharer", "openai:gpt-5-mini")
	checkCLI(t, []cliCase{
		{name: "the paper's figures beside a live model's", args: []string{"report", live, "--table", "paper"}, golden: "report-paper-live"},
		{name: "an unknown paper row", args: []string{"report", live, "--paper-map", "llama=openai:gpt-5-mini"}, exit: 2,
			stderr: []string{`--paper-map: no paper row "llama" (rows: gpt-5-mini, mistral-7b)`}},
		{name: "an actor not in the report", args: []string{"report", live, "--paper-map", "mistral-7b=ollama:mistral"}, exit: 2,
			stderr: []string{`--paper-map: no actor "ollama:mistral" in this report (actors: openai:gpt-5-mini)`}},
	})
	// A GPT-5-mini run fills no Mistral 7B row; --paper-map (which implies
	// --paper) says which run does. The oversharer passes in the two
	// projected configurations only: PatchOptic ties View Only.
	squeezed := regexp.MustCompile(` +`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", live, "--table", "paper", "--format", "markdown"},
			"| semantic pass, PatchOptic (rank of six) | 0.690, the best of the six | Mistral 7B | not measured | no run of Mistral 7B (actors: openai:gpt-5-mini; --paper-map mistral-7b=ACTOR names one) |"},
		{[]string{"report", live, "--table", "paper", "--format", "markdown", "--paper-map", "Mistral 7B=openai:gpt-5-mini"},
			"| semantic pass, PatchOptic (rank of six) | 0.690, the best of the six | Mistral 7B | 1.000, tied 1st–2nd of 6 | openai:gpt-5-mini,"},
	} {
		if got := squeezed.ReplaceAllString(runOK(t, c.args...), " "); !strings.Contains(got, c.want) {
			t.Errorf("%v: no %q in:\n%s", c.args, c.want, got)
		}
	}

	// The stress figure: the stress test on the run's case set, with the
	// configurations' gates as the manifest recorded them, or, in a
	// manifest that recorded their names only, as the embedded ones of
	// those names.
	suite := filepath.Join(tmp, "suite")
	runOK(t, "run", "--case", "fin-expense-review", "--actor", "reference", "--config", "fsm-acl,verify-only,patchoptic", "--out", suite)
	const want = "| no-model stress, hidden-source artifacts accepted | PatchOptic and Verify Only 0/9; FSM+ACL 8/9 | no model | PatchOptic 0/1; Verify Only 0/1; FSM+ACL 1/1 |"
	squeeze := regexp.MustCompile(` +`)
	if got := squeeze.ReplaceAllString(runOK(t, "report", suite, "--table", "paper", "--format", "markdown"), " "); !strings.Contains(got, want) {
		t.Errorf("no %q in:\n%s", want, got)
	}
	raw, _ := os.ReadFile(filepath.Join(suite, "manifest.json"))
	var m map[string]any
	json.Unmarshal(raw, &m)
	delete(m, "config_details")
	raw, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(suite, "manifest.json"), raw, 0o644)
	if got := squeeze.ReplaceAllString(runOK(t, "report", suite, "--table", "paper", "--format", "markdown"), " "); !strings.Contains(got, want) {
		t.Errorf("a manifest without config_details: no %q in:\n%s", want, got)
	}
}

// TestCompareFormats: compare in every format, several directories on a
// side, --shared-only, and sides that cannot be compared.
func TestCompareFormats(t *testing.T) {
	tmp := t.TempDir()
	full, s0, s1 := filepath.Join(tmp, "full"), filepath.Join(tmp, "s0"), filepath.Join(tmp, "s1")
	runOK(t, "run", "--cases", exampleCases, "--out", full)
	runOK(t, "run", "--cases", exampleCases, "--out", s0, "--shard", "0/2")
	runOK(t, "run", "--cases", exampleCases, "--out", s1, "--shard", "1/2")
	// B: one passing run fails and leaks; the follower's runs are missing.
	broken := filepath.Join(tmp, "broken")
	os.MkdirAll(broken, 0o755)
	m, _ := os.ReadFile(filepath.Join(full, "manifest.json"))
	os.WriteFile(filepath.Join(broken, "manifest.json"), m, 0o644)
	runs, _ := os.ReadFile(filepath.Join(full, "runs.jsonl"))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(runs)), "\n") {
		if strings.Contains(l, `"actor":"follower"`) {
			continue
		}
		if strings.Contains(l, `"run_id":"sup-example-refund/patchoptic/reference/1"`) {
			l = strings.Replace(strings.Replace(l, `"status":"passed"`, `"status":"failed"`, 1), `"leaked":false`, `"leaked":true`, 1)
			l = strings.Replace(strings.Replace(l, `"semantic_pass":true`, `"semantic_pass":false`, 1), `"legal_pass":true`, `"legal_pass":false`, 1)
		}
		lines = append(lines, l)
	}
	os.WriteFile(filepath.Join(broken, "runs.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	prompt := copyRunDir(t, full, filepath.Join(tmp, "prompt3"), `"prompt_version": "patchbench-prompt/2`, `"prompt_version": "patchbench-prompt/3`)

	cases := []cliCase{
		{name: "shards as one side", args: []string{"compare", s0 + "," + s1, full}, golden: "compare-shards"},
		{name: "only the shared runs", args: []string{"compare", full, broken, "--shared-only"}, exit: 1, golden: "compare-shared-only"},
		{name: "another prompt template", args: []string{"compare", full, prompt}, exit: 2,
			stderr: []string{"do not measure the same thing", "prompt template patchbench-prompt/2", "against patchbench-prompt/3", "--allow-prompt-change if the change is the point"}},
		{name: "another prompt template, allowed", args: []string{"compare", full, prompt, "--allow-prompt-change"}},
		{name: "a bad format", args: []string{"compare", full, broken, "--format", "yaml"}, exit: 2, stderr: []string{"--format must be text, markdown, csv, latex or json"}},
		{name: "a side that is not a run directory", args: []string{"compare", full, filepath.Join(tmp, "nope") + "," + s0}, exit: 2, stderr: []string{"is not a run directory"}},
	}
	for _, f := range []string{"text", "markdown", "csv", "latex", "json"} {
		cases = append(cases, cliCase{name: f, args: []string{"compare", full, broken, "--format", f}, exit: 1, golden: "compare-regression-" + f})
	}
	checkCLI(t, cases)
}

// TestReportPlots: the charts in each format and size, rates on [0, 1].
func TestReportPlots(t *testing.T) {
	if testing.Short() {
		t.Skip("draws every chart in four formats")
	}
	out := t.TempDir()
	runOK(t, "run", "--cases", exampleCases, "--out", out, "--rounds", "2")
	charts := []string{"leak-rate", "illegal-commits", "semantic-pass", "tokens"}
	for _, c := range []struct {
		format, size string
		w, h         int // pixels (PNG) or points (SVG, PDF)
	}{
		{"png", "one-column", 1050, 780},
		{"png", "two-column", 2100, 840},
		{"svg", "one-column", 252, 187},
		{"pdf", "two-column", 504, 201},
	} {
		t.Run(c.format+" "+c.size, func(t *testing.T) {
			dir := t.TempDir()
			_, stderr, code := runCLI(t, cliCase{args: []string{"report", out, "--plots", dir, "--plot-format", c.format, "--plot-size", c.size, "--table", "main"}})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, name := range charts {
				path := filepath.Join(dir, name+"."+c.format)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(stderr, "wrote "+path) {
					t.Errorf("stderr does not name %s", path)
				}
				fi, _ := os.Stat(path)
				if fi.Mode().Perm() != 0o644 {
					t.Errorf("%s: mode %v", path, fi.Mode())
				}
				w, h := plotSize(t, c.format, b)
				if w != c.w || h != c.h {
					t.Errorf("%s: %d×%d, want %d×%d", path, w, h, c.w, c.h)
				}
			}
		})
	}
	// The rate axes run from 0 to 1 (ticks 0.0, 0.5, 1.0, nothing above),
	// the title and the legend's names are drawn, and the SVG is the same
	// from one run to the next (a golden file).
	dir := t.TempDir()
	runOK(t, "report", out, "--plots", dir, "--plot-format", "svg", "--table", "main")
	svg, _ := os.ReadFile(filepath.Join(dir, "leak-rate.svg"))
	var texts []string
	for _, m := range regexp.MustCompile(`>([^<>]+)</text>`).FindAllStringSubmatch(string(svg), -1) {
		texts = append(texts, m[1])
	}
	want := []string{"Leak rate (95% Wilson interval)", "reference", "oversharer", "follower",
		"Unconstrained", "Schema Only", "FSM+ACL", "View Only", "Verify Only", "PatchOptic", "leak rate", "0.0", "0.5", "1.0"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("the leak rate chart's text (-want +got):\n%s", diff)
	}
	path := filepath.Join("testdata", "golden", "plot-leak-rate.svg")
	if *update {
		os.WriteFile(path, svg, 0o644)
	}
	if golden, err := os.ReadFile(path); err != nil || !bytes.Equal(golden, svg) {
		t.Errorf("leak-rate.svg differs from %s (run with -update to see why): %v", path, err)
	}
}

// plotSize reads a chart's size: pixels of a PNG, points of an SVG's or a
// PDF's page (rounded down).
func plotSize(t *testing.T, format string, b []byte) (int, int) {
	t.Helper()
	var w, h float64
	switch format {
	case "png":
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Width, cfg.Height
	case "svg":
		m := regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("not an SVG chart: %.200s", b)
		}
		json.Unmarshal(m[1], &w)
		json.Unmarshal(m[2], &h)
	case "pdf":
		m := regexp.MustCompile(`/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]`).FindSubmatch(b)
		if !bytes.HasPrefix(b, []byte("%PDF-")) || m == nil {
			t.Fatalf("not a PDF chart: %.200s", b)
		}
		json.Unmarshal(m[1], &w)
		json.Unmarshal(m[2], &h)
	}
	return int(w), int(h)
}

// TestLaTeXCompiles compiles every LaTeX golden file (the report's tables,
// with and without their intervals in their own columns, and compare's)
// with pdflatex in a two-column article, and fails on an error, a table
// wider than its column or page, or a character the font lacks. It is
// skipped where TeX is not installed.
func TestLaTeXCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pdflatex")
	}
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		testenv.Missing(t, "PATCHBENCH_REQUIRE_LATEX", "pdflatex is not installed, so the LaTeX tables were not compiled",
			"Debian: apt-get install texlive-latex-base texlive-latex-recommended")
	}
	var body strings.Builder
	for _, g := range []string{"report-latex", "report-latex-ci-columns", "compare-regression-latex"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", g+".stdout"))
		if err != nil {
			t.Fatal(err)
		}
		body.Write(b)
		body.WriteString("\n\\clearpage\n")
	}
	doc := "\\documentclass[twocolumn]{article}\n\\usepackage{booktabs,graphicx,tabularx}\n\\tracinglostchars=2\n\\begin{document}\n" +
		"Tables~\\ref{tab:patchbench-main} and~\\ref{tab:patchbench-paper}.\n" + body.String() + "\\end{document}\n"
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tables.tex"), []byte(doc), 0o644)
	// Twice: the second run resolves the references to the labels.
	for range 2 {
		cmd := exec.Command(pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "tables.tex")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pdflatex: %v\n%s", err, out)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "tables.log"))
	for _, bad := range []string{"Overfull \\hbox", "Missing character", "undefined"} {
		if i := bytes.Index(log, []byte(bad)); i >= 0 {
			t.Errorf("tables.log: %s", log[i:min(len(log), i+300)])
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "tables.pdf")); err != nil || fi.Size() == 0 {
		t.Errorf("no PDF: %v", err)
	}
}

// TestVersion: the version command and flag print the module version, the
// VCS revision (unknown in a test binary) and the toolchain; run records
// the build in the manifest, and a manifest without it still resumes.
func TestVersion(t *testing.T) {
	text := runOK(t, "version")
	if again := runOK(t, "--version"); again != text {
		t.Errorf("--version differs from version:\n%s\n%s", again, text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "patchbench ") || !strings.HasPrefix(lines[1], "revision: ") || lines[2] != "go: "+goruntime.Version()+" "+goruntime.GOOS+"/"+goruntime.GOARCH {
		t.Errorf("version:\n%s", text)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(runOK(t, "version", "--format", "json")), &b); err != nil || b.Go != goruntime.Version() {
		t.Errorf("version --format json: %+v %v", b, err)
	}
	known := buildInfo{Module: "github.com/patchbench/patchbench", Version: "v0.0.0-20261201044957-8c005e603459+dirty", Revision: "8c005e6034593ef8d39b681dc33d15fff7f5184a",
		Time: "2026-12-01T04:49:57Z", Modified: true, Go: "go1.26.0", Platform: "linux/amd64"}
	if want := "patchbench v0.0.0-20261201044957-8c005e603459+dirty (github.com/patchbench/patchbench)\nrevision: 8c005e6034593ef8d39b681dc33d15fff7f5184a (2026-12-01T04:49:57Z), with changes not committed\ngo: go1.26.0 linux/amd64\n"; known.text() != want {
		t.Errorf("a stamped build:\n%s\nwant\n%s", known.text(), want)
	}

	out := filepath.Join(t.TempDir(), "run")
	args := []string{"run", "--cases", exampleCases, "--out", out, "--actor", "reference", "--config", "patchoptic"}
	runOK(t, args...)
	var m map[string]any
	raw, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	json.Unmarshal(raw, &m)
	if build, _ := m["build"].(map[string]any); build["go"] != goruntime.Version() {
		t.Errorf("the manifest's build: %v", m["build"])
	}
	// A manifest written before the build was recorded still reads and
	// resumes.
	delete(m, "build")
	raw, _ = json.MarshalIndent(m, "", "  ")
	os.WriteFile(filepath.Join(out, "manifest.json"), raw, 0o644)
	runOK(t, "report", out)
	if _, stderr, code := runCLI(t, cliCase{args: args}); code != 0 || !strings.Contains(stderr, "(1 run)") {
		t.Errorf("resume of an old manifest: exit %d: %s", code, stderr)
	}
}

// TestReportAll: --all writes every table into a folder, as CSV or JSON,
// with the tidy long file; it goes with csv or json only.
func TestReportAll(t *testing.T) {
	out := t.TempDir()
	runOK(t, "run", "--cases", exampleCases, "--out", out)
	for _, format := range []string{"csv", "json"} {
		dir := filepath.Join(t.TempDir(), "tables")
		_, stderr, code := runCLI(t, cliCase{args: []string{"report", out, "--format", format, "--all", dir}})
		if code != 0 || !strings.Contains(stderr, "files into "+dir) {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		for _, name := range []string{"main", "attacks", "domains", "long"} {
			if _, err := os.Stat(filepath.Join(dir, name+"."+format)); err != nil {
				t.Errorf("%s: %v", format, err)
			}
		}
	}
	checkCLI(t, []cliCase{
		{name: "all with text", args: []string{"report", out, "--all", t.TempDir()}, exit: 2, stderr: []string{"--all writes csv or json files"}},
	})
}
