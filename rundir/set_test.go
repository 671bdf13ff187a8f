package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// runDir writes a run directory holding m and recs.
func runDir(t *testing.T, dir string, m Manifest, recs ...*Record) string {
	t.Helper()
	writeRecords(t, dir, recs...)
	if err := WriteJSON(dir, ManifestFile, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

// actorRec is a record of actor a.
func actorRec(caseID, config, actor string, round int, status string) *Record {
	r := rec(caseID, config, round, status)
	r.Actor = actor
	r.RunID = caseID + "/" + config + "/" + actor + "/" + itoa(round)
	return r
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestReadSetShardSeries: shards of one run's settings from series of
// different sizes are refused as merge refuses them, naming the odd
// directory; shards of a series given without the others are listed
// (ShardsNotGiven) with the shards missing, a whole series is not, and
// neither are unsharded directories.
func TestReadSetShardSeries(t *testing.T) {
	tmp := t.TempDir()
	dir := func(name, shard string, recs ...*Record) string {
		return runDir(t, filepath.Join(tmp, name), manifest(shard, 1), recs...)
	}
	s30 := dir("s3-0", "0/3", rec("a", "x", 1, StatusPassed))
	s31 := dir("s3-1", "1/3", rec("a", "y", 1, StatusPassed))
	s32 := dir("s3-2", "2/3", rec("a", "x", 2, StatusPassed))
	s20 := dir("s2-0", "0/2", rec("a", "x", 1, StatusPassed))
	_, err := ReadSet([]string{s30, s20, s31, s32})
	if want := s20 + ": shard 0/2 is of a series of 2; the others of 3"; err == nil || !strings.Contains(err.Error(), want) || codeOf(err) != CodeSettingsDiffer {
		t.Errorf("mixed series: %v, want %q", err, want)
	}
	for _, c := range []struct {
		dirs []string
		want []string
	}{
		{[]string{s30, s31}, []string{s30 + ", " + s31 + " (shards of a series of 3, without 2/3)"}},
		{[]string{s31}, []string{s31 + " (shards of a series of 3, without 0/3, 2/3)"}},
		{[]string{s30, s31, s32}, nil},
		{[]string{dir("whole", "", rec("a", "x", 1, StatusPassed))}, nil},
	} {
		set, err := ReadSet(c.dirs)
		if err != nil {
			t.Fatalf("%v: %v", c.dirs, err)
		}
		if got := set.ShardsNotGiven(); !slices.Equal(got, c.want) {
			t.Errorf("%v: %q, want %q", c.dirs, got, c.want)
		}
	}
}

func TestReadSetRefusesWhatIsNotOneComparison(t *testing.T) {
	tmp := t.TempDir()
	base := manifest("", 2)
	base.CaseIDs = []string{"a", "b"}
	base.CaseSet, base.CaseDigest, base.PromptVersion, base.PassThreshold = "cases", "d1", "patchbench-prompt/2", 0.8
	one := runDir(t, filepath.Join(tmp, "one"), base, rec("a", "x", 1, StatusPassed))

	otherCases := base
	otherCases.CaseIDs, otherCases.CaseDigest = []string{"a", "c"}, "d2"
	otherPrompt := base
	otherPrompt.PromptVersion = "patchbench-prompt/3"
	otherConfig := base
	otherConfig.ConfigDetails = []*bench.Config{{Name: "x", Label: "X", View: "full", Gates: []string{"scope"}}, {Name: "y", Label: "Y", View: "full"}}
	oneConfig := base
	oneConfig.ConfigDetails = []*bench.Config{{Name: "x", Label: "X", View: "projected"}, {Name: "y", Label: "Y", View: "full"}}
	withConfig := runDir(t, filepath.Join(tmp, "with-config"), oneConfig, rec("b", "x", 1, StatusPassed))
	for _, c := range []struct {
		name  string
		m     Manifest
		other string        // the first directory, when not one
		want  SettingsError // but its paths
	}{
		{"another case set", otherCases, "", SettingsError{Settings: []string{"case_digest", "case_ids"},
			Detail: "case set cases (2 cases) against cases (2 cases), or the same cases edited; cases only in the first: b; only in the second: c"}},
		{"another prompt template", otherPrompt, "", SettingsError{Settings: []string{"prompt_version"}, Detail: "prompt template patchbench-prompt/2 against patchbench-prompt/3"}},
		{"a configuration defined twice", otherConfig, withConfig, SettingsError{Config: "x", Detail: "view projected, gates none against view full, gates scope"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			first := c.other
			if first == "" {
				first = one
			}
			dir := runDir(t, filepath.Join(t.TempDir(), "two"), c.m, rec("a", "y", 1, StatusPassed))
			_, err := ReadSet([]string{first, dir})
			var se *SettingsError
			if !errors.As(err, &se) || codeOf(err) != CodeSettingsDiffer {
				t.Fatalf("combined: %v", err)
			}
			want := c.want
			want.A, want.B = first, dir
			if diff := cmp.Diff(&want, se); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReadSet([]string{one, one + "/"}); codeOf(err) != CodeGivenTwice {
		t.Errorf("a directory twice: %v", err)
	}
	// A symlink to it is the same directory (through one, every run
	// counted twice).
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(one, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSet([]string{one, link}); codeOf(err) != CodeGivenTwice {
		t.Errorf("a symlink to a directory given: %v", err)
	}
}

func TestReadSetKeysRunsAcrossDirectories(t *testing.T) {
	tmp := t.TempDir()
	m := manifest("", 2)
	m.Actors = []string{"reference", "openai:m"}
	// Two dates of the same actors: each holds run a/x/reference/1.
	day1 := runDir(t, filepath.Join(tmp, "day1"), m, rec("a", "x", 1, StatusPassed), actorRec("a", "x", "openai:m", 1, StatusPassed))
	day2m := m
	day2m.Actors = []string{"reference", "ollama:n"}
	day2m.Configs = []string{"x", "z"}
	day2 := runDir(t, filepath.Join(tmp, "day2"), day2m, rec("a", "x", 1, StatusFailed), actorRec("a", "z", "ollama:n", 1, StatusPassed))
	s, err := ReadSet([]string{day1, day2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"reference@day1", "openai:m", "reference@day2", "ollama:n"}, s.Actors); diff != "" {
		t.Errorf("actors (-want +got):\n%s", diff)
	}
	var names []string
	for _, c := range s.Configs {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"x", "y", "z"}, names); diff != "" {
		t.Errorf("configurations: the union in order (-want +got):\n%s", diff)
	}
	var got []string
	s.Each(func(dir int, r *Record) error {
		got = append(got, itoa(dir)+" "+r.Case+"/"+r.Config+"/"+r.Actor+"/"+itoa(r.Round)+" "+r.Status)
		return nil
	})
	want := []string{"0 a/x/reference@day1/1 passed", "0 a/x/openai:m/1 passed", "1 a/x/reference@day2/1 failed", "1 a/z/ollama:n/1 passed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(got) != 4 || s.ExpectedRuns() != 4 {
		t.Errorf("runs %d, expected %d", len(got), s.ExpectedRuns())
	}

	// Shards of one run never hold the same run: their actors keep their
	// names.
	s0 := runDir(t, filepath.Join(tmp, "s0"), manifest("0/2", 1), rec("a", "x", 1, StatusPassed))
	s1 := runDir(t, filepath.Join(tmp, "s1"), manifest("1/2", 1), rec("a", "y", 1, StatusPassed))
	s, err = ReadSet([]string{s0, s1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"reference"}, s.Actors); diff != "" || s.Dirs[0].Runs()+s.Dirs[1].Runs() != 2 {
		t.Errorf("shards: actors (-want +got):\n%s", diff)
	}
}

// fullRecord is a record with every member set, and strings that a
// structural scan must skip whole.
func fullRecord(caseID, config string, round int) *Record {
	tricky := `a "quoted" \ back\\slash \" {"held":true} ], } [ ` + "\u2028 é \t\n"
	r := rec(caseID, config, round, StatusFailed)
	errText := tricky
	r.Domain, r.Leaked, r.TokensSent, r.ContentScore = "support", true, 12, 0.5
	r.Leaks = []scoring.Leak{{Secret: "s1", Where: "output", Detector: "exact", Step: "one"}}
	r.Tokens = Usage{Prompt: 100, Completion: 20, Source: "provider"}
	r.Checks = []scoring.CheckResult{{ID: "c1", Step: "one", Path: "/x", Test: tricky, Held: true}, {ID: "c2", Step: "one", Test: `"held":true`}}
	r.IllegalCommits = []IllegalCommit{{Step: "one", Gate: "scope", Code: "write_outside_region", Message: tricky}}
	r.Attack = &Attack{Secrets: []string{"s1"}, Succeeded: true}
	r.Error = &errText
	r.FinalState = json.RawMessage(`{"big":"` + strings.Repeat("x", 5000) + `","n":[1,2,{"a":"}"}]}`)
	r.Steps = []StepRecord{{
		Step: "one", Phase: "triage", Attempts: 2, Committed: true,
		Decisions:  []runtime.GateResult{{Gate: "scope", Passed: true}},
		Audit:      []runtime.GateResult{{Gate: "scope", Passed: false, Code: "write_outside_region", Message: tricky}},
		ViewDigest: "abc", ViewTokens: 40, RawResponse: tricky, Model: "m-1", Fingerprint: "fp", LatencyMS: 5, Cached: true,
		Prompt:  []Message{{Role: "user", Content: tricky}},
		Patch:   []runtime.Operation{{Op: "add", Path: mustPointer("/x"), Value: "v"}},
		Earlier: []Attempt{{RawResponse: tricky, Decisions: []runtime.GateResult{{Gate: "apply", Code: "patch_does_not_apply"}}, Audit: []runtime.GateResult{{Gate: "scope"}}}},
	}, {Step: "two", Phase: "done", NotReached: true, PhaseError: "x", InheritedViolation: "schema: schema_violation"}}
	return r
}

func mustPointer(s string) runtime.Pointer {
	p, err := runtime.ParsePointer(s)
	if err != nil {
		panic(err)
	}
	return p
}

func TestIndexKeepsEveryHeadMember(t *testing.T) {
	dir := t.TempDir()
	a, b, c := fullRecord("a", "x", 1), fullRecord("a", "y", 1), rec("a", "x", 2, StatusError)
	retried := fullRecord("a", "x", 1)
	retried.Status = StatusPassed
	m := manifest("", 3)
	runDir(t, dir, m, a, b, c, retried)
	// A last line cut short by a crash is not a run.
	appendRaw(t, dir, `{"run_id":"a/y/reference/2","case":"a","conf`)
	ix, err := BuildIndex(dir, &m)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/x/reference/1", "a/y/reference/1", "a/x/reference/2"}, ix.RunIDs()); diff != "" {
		t.Fatalf("runs (-want +got):\n%s", diff)
	}
	// The head is the record without what the index leaves out.
	lean := func(r *Record) *Record {
		c := *r
		c.Checks, c.FinalState = nil, nil
		c.Leaks = compactLeaks(slices.Clone(r.Leaks)) // one a kind, mechanism, detector, field and step
		c.Steps = nil
		for _, st := range r.Steps {
			st.Audit, st.ViewDigest, st.ViewTokens, st.RawResponse, st.Prompt, st.Patch = nil, "", 0, "", nil, nil
			st.Fingerprint, st.LatencyMS, st.Cached = "", 0, false
			if !slices.ContainsFunc(st.Decisions, func(g runtime.GateResult) bool { return !g.Passed }) {
				st.Decisions = nil // an index keeps decisions only where a gate failed
			}
			var earlier []Attempt
			for _, e := range st.Earlier {
				earlier = append(earlier, Attempt{Decisions: e.Decisions})
			}
			st.Earlier = earlier
			c.Steps = append(c.Steps, st)
		}
		return &c
	}
	for i, want := range []*Record{retried, b, c} {
		// The structural scan follows the writer's lines (it does not
		// fall back on decoding them whole).
		line, _ := json.Marshal(want)
		if _, _, _, err := (&leanDecoder{names: map[string]string{}}).decode(line, false); err != nil {
			t.Errorf("%s: the scan does not follow the line: %v", want.RunID, err)
		}
		e := ix.Entry(i)
		if diff := cmp.Diff(lean(want), e.Head, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: head (-want +got):\n%s", want.RunID, diff)
		}
		if wantChecks := len(want.Checks); e.NChecks != wantChecks || (wantChecks > 0 && e.NHeld != 1) {
			t.Errorf("%s: %d checks, %d held", want.RunID, e.NChecks, e.NHeld)
		}
		full, err := ix.Load(i)
		if err != nil {
			t.Fatal(err)
		}
		if full.RunID != want.RunID || full.Status != want.Status || len(full.FinalState) != len(want.FinalState) || len(full.Steps) != len(want.Steps) {
			t.Errorf("Load %d: %s %s", i, full.RunID, full.Status)
		}
	}
	if i, ok := ix.Lookup("a/y/reference/1"); !ok || i != 1 || !ix.Has("a/x/reference/2") || ix.Has("a/y/reference/2") || ix.Len() != 3 {
		t.Errorf("lookup %d %v", i, ok)
	}
	// A record of another run is refused with its line.
	other := manifest("", 3)
	other.Configs = []string{"x"}
	_, err = BuildIndex(dir, &other)
	var le *LineError
	var out *OutsideRunError
	if !errors.As(err, &le) || le.Path != filepath.Join(dir, RunsFile) || le.Line != 2 || !errors.As(err, &out) || *out != (OutsideRunError{RunID: "a/y/reference/1", Member: "config", Value: "y"}) {
		t.Errorf("another configuration: %v", err)
	}
	// A file rewritten since: Load says so.
	os.WriteFile(filepath.Join(dir, RunsFile), []byte(strings.Repeat(" ", 100)+"\n"), 0o644)
	if _, err := ix.Load(0); err == nil {
		t.Error("Load of a rewritten file")
	}
}

func TestIndexOfAnUnusualLine(t *testing.T) {
	// Spaces and member order the writer never makes, and null members:
	// the index reads them as Read does.
	dir := t.TempDir()
	m := manifest("", 2)
	runDir(t, dir, m)
	appendRaw(t, dir, `{ "steps" : null , "checks" : [ { "held" : true } , { "held":false } ] , "status" : "passed", "run_id" : "a/x/reference/1", "case":"a", "config":"x", "actor":"reference", "round": 1 }`+"\n")
	appendRaw(t, dir, `{"run_id":"a/y/reference/1","case":"a","config":"y","actor":"reference","round":1,"status":"failed","checks":null,"steps":[{"step":"s","committed":true,"earlier":null}]}`+"\n")
	ix, err := BuildIndex(dir, &m)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]byte{[]byte(`{ "steps" : null , "checks" : [ { "held" : true } ] }`), []byte(`{"steps":[{"earlier":null}]}`)} {
		if _, _, _, err := (&leanDecoder{names: map[string]string{}}).decode(l, false); err != nil {
			t.Errorf("the scan does not follow %s: %v", l, err)
		}
	}
	if e := ix.Entry(0); e.NChecks != 2 || e.NHeld != 1 || e.Head.Status != StatusPassed {
		t.Errorf("%+v", e)
	}
	if e := ix.Entry(1); len(e.Head.Steps) != 1 || !e.Head.Steps[0].Committed || e.NChecks != 0 {
		t.Errorf("%+v", e.Head)
	}
	// Not JSON: an error naming the line.
	appendRaw(t, dir, "{nope}\n")
	_, err = BuildIndex(dir, &m)
	var le *LineError
	if !errors.As(err, &le) || le.Path != filepath.Join(dir, RunsFile) || le.Line != 3 || codeOf(err) != CodeDamagedLine {
		t.Errorf("a line that is not JSON: %v", err)
	}
	// No runs.jsonl: no runs.
	if ix, err := BuildIndex(t.TempDir(), nil); err != nil || ix.Len() != 0 {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestSideNamesRepeats: directories of one side of a comparison. Two
// runs of the same settings that hold the same runs are one actor, told
// apart by their repeat; shards of them keep repeat 0 and pair with the
// repeats' shards; a directory of other settings holding the same runs
// names the actor apart ("actor@dir", for the three runs of one setting
// the first's name), and ActorOf gives the actor back.
func TestSideNamesRepeats(t *testing.T) {
	tmp := t.TempDir()
	m := manifest("", 2)
	r1 := runDir(t, filepath.Join(tmp, "r1"), m, rec("a", "x", 1, StatusPassed))
	r2 := runDir(t, filepath.Join(tmp, "r2"), m, rec("a", "x", 1, StatusFailed))
	r3 := runDir(t, filepath.Join(tmp, "r3"), m, rec("a", "x", 1, StatusFailed))
	seed := m
	seed.Seed = 7
	other := runDir(t, filepath.Join(tmp, "other"), seed, rec("a", "x", 1, StatusPassed))
	s, err := ReadSet([]string{r1, r2, r3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"reference"}, s.OneActors); diff != "" || s.Repeat(2) != 2 {
		t.Errorf("one setting: actors (-want +got):\n%s\nrepeat %d", diff, s.Repeat(2))
	}
	s, err = ReadSet([]string{r1, r2, r3, other})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	s.EachSideHead(func(dir, repeat int, r *Record) error {
		got = append(got, itoa(dir)+" "+itoa(repeat)+" "+r.Actor+" "+r.Status)
		return nil
	})
	want := []string{"0 0 reference@r1 passed", "1 1 reference@r1 failed", "2 2 reference@r1 failed", "3 0 reference@other passed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("side heads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"reference@r1", "reference@other"}, s.OneActors); diff != "" {
		t.Errorf("side actors (-want +got):\n%s", diff)
	}
	// report's naming is unchanged: every directory apart.
	if diff := cmp.Diff([]string{"reference@r1", "reference@r2", "reference@r3", "reference@other"}, s.Actors); diff != "" {
		t.Errorf("report's actors (-want +got):\n%s", diff)
	}
	if s.ActorOf("reference@other") != "reference" || s.ActorOf("reference@r2") != "reference" || s.ActorOf("x@y") != "x@y" {
		t.Errorf("ActorOf: %q %q", s.ActorOf("reference@other"), s.ActorOf("reference@r2"))
	}

	// Shards of two runs of one setting: each run's shards are one repeat.
	var dirs []string
	for _, x := range []struct {
		name, shard, config string
	}{{"a0", "0/2", "x"}, {"a1", "1/2", "y"}, {"b0", "0/2", "x"}, {"b1", "1/2", "y"}} {
		dirs = append(dirs, runDir(t, filepath.Join(tmp, x.name), manifest(x.shard, 1), rec("a", x.config, 1, StatusPassed)))
	}
	s, err = ReadSet(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var repeats []int
	for i := range dirs {
		repeats = append(repeats, s.Repeat(i))
	}
	if diff := cmp.Diff([]int{0, 0, 1, 1}, repeats); diff != "" || strings.Join(s.OneActors, ",") != "reference" {
		t.Errorf("shards' repeats (-want +got):\n%s\nactors %v", diff, s.OneActors)
	}
}

// Each is EachHead with whole records (Dir.Each), for the tests: it calls
// fn with the last record of each run of each directory, the
// directories in order and each in the order of its runs.jsonl, with the
// directory's index and the record's Actor renamed as the comparison names
// it (Combined.Name; RunID keeps the directory's own name, as show and the
// browser find it). Since Combine renames an actor whose runs two
// directories both hold, no two records it passes share a key (case,
// configuration, actor, round). An error from fn stops it.
func (s *Set) Each(fn func(dir int, r *Record) error) error {
	for i, d := range s.Dirs {
		err := d.Each(func(r *Record) error {
			r.Actor = s.Name(i, r.Actor)
			return fn(i, r)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// TestReadSetRefusesNoDirectory: a set of no directory, or a group of
// none read over the common cases, is an error rather than a set without
// a manifest (which SideDifferences would index).
func TestReadSetRefusesNoDirectory(t *testing.T) {
	if _, err := ReadSet(nil); err == nil || !strings.Contains(err.Error(), "no run directory") {
		t.Errorf("ReadSet(nil): %v", err)
	}
	if _, _, err := ReadSetsCommon([][]string{nil, {t.TempDir()}}); err == nil || !strings.Contains(err.Error(), "no run directory") {
		t.Errorf("ReadSetsCommon of an empty group: %v", err)
	}
}
