package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runspec"
	"go.yaml.in/yaml/v3"
)

func TestResolveShard(t *testing.T) {
	cases := []struct {
		name, spec string
		env        map[string]string
		want       runner.Shard
		from, err  string
	}{
		{name: "none", spec: ""},
		{name: "i/n", spec: "1/3", want: runner.Shard{Index: 1, Of: 3}},
		{name: "i out of range", spec: "3/3", err: "want i/n with 0 ≤ i < n"},
		{name: "not a shard", spec: "half", err: "want i/n"},
		{name: "kubernetes", spec: "env", env: map[string]string{"JOB_COMPLETION_INDEX": "2", "PATCHBENCH_SHARD_COUNT": "4"},
			want: runner.Shard{Index: 2, Of: 4}, from: "shard 2/4, from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX=2, PATCHBENCH_SHARD_COUNT=4)"},
		{name: "kubernetes, count inline", spec: "env/4", env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, want: runner.Shard{Index: 3, Of: 4}},
		{name: "kubernetes without a count", spec: "env", env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, err: "give --shard env/n, or set PATCHBENCH_SHARD_COUNT"},
		{name: "counts disagree", spec: "env/5", env: map[string]string{"JOB_COMPLETION_INDEX": "2", "PATCHBENCH_SHARD_COUNT": "4"},
			err: "--shard env/5 and PATCHBENCH_SHARD_COUNT=4 disagree"},
		{name: "index beyond the count", spec: "env", env: map[string]string{"JOB_COMPLETION_INDEX": "4", "PATCHBENCH_SHARD_COUNT": "4"}, err: "shard 4 of 4"},
		{name: "not an integer", spec: "env", env: map[string]string{"JOB_COMPLETION_INDEX": "two", "PATCHBENCH_SHARD_COUNT": "4"}, err: `JOB_COMPLETION_INDEX="two" is not an integer`},
		{name: "no index", spec: "env", env: map[string]string{"PATCHBENCH_SHARD_COUNT": "4"}, err: "no shard index in the environment (PATCHBENCH_SHARD_INDEX, JOB_COMPLETION_INDEX"},
		{name: "a matrix", spec: "env", env: map[string]string{"PATCHBENCH_SHARD_INDEX": "1", "PATCHBENCH_SHARD_COUNT": "2"}, want: runner.Shard{Index: 1, Of: 2}},
		{name: "PatchBench's index first", spec: "env", env: map[string]string{"PATCHBENCH_SHARD_INDEX": "1", "JOB_COMPLETION_INDEX": "3", "PATCHBENCH_SHARD_COUNT": "4"},
			want: runner.Shard{Index: 1, Of: 4}},
		{name: "gitlab counts from 1", spec: "env", env: map[string]string{"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "3"}, want: runner.Shard{Index: 2, Of: 3}},
		{name: "gitlab index 0", spec: "env", env: map[string]string{"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"}, err: "shard -1 of 3"},
		{name: "gitlab total set alone", spec: "env", env: map[string]string{"CI_NODE_TOTAL": "1", "JOB_COMPLETION_INDEX": "1", "PATCHBENCH_SHARD_COUNT": "2"},
			want: runner.Shard{Index: 1, Of: 2}},
		{name: "circleci", spec: "env", env: map[string]string{"CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "2"}, want: runner.Shard{Index: 1, Of: 2}},
		{name: "buildkite", spec: "env", env: map[string]string{"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "5"}, want: runner.Shard{Index: 0, Of: 5}},
		{name: "too many shards", spec: "env", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "PATCHBENCH_SHARD_COUNT": "10001"}, err: "count ≤ 10000"},
		{name: "env with junk", spec: "envy", err: "want env or env/n"},
		{name: "env/ junk", spec: "env/x", err: "want env or env/n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sh, from, err := resolveShard(tc.spec, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sh != tc.want || (tc.from != "" && from != tc.from) {
				t.Errorf("shard %+v from %q, want %+v from %q", sh, from, tc.want, tc.from)
			}
		})
	}
}

// TestRunShardEnv runs the example as two shards whose index and count
// come from a Kubernetes Indexed Job's environment, and merges them: the
// manifests record the resolved shards, and the merged run is complete.
func TestRunShardEnv(t *testing.T) {
	tmp := t.TempDir()
	var dirs []string
	for i := 0; i < 2; i++ {
		t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(i))
		t.Setenv("PATCHBENCH_SHARD_COUNT", "2")
		dir := filepath.Join(tmp, fmt.Sprintf("shard-%d", i))
		_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--shard", "env", "--out", dir}})
		if code != 0 || !strings.Contains(stderr, fmt.Sprintf("shard %d/2, from a Kubernetes Indexed Job", i)) {
			t.Fatalf("shard %d: exit %d: %s", i, code, stderr)
		}
		m, err := rundir.ReadManifest(dir)
		if err != nil || m.Shard != fmt.Sprintf("%d/2", i) {
			t.Fatalf("shard %d: manifest shard %v %v", i, m, err)
		}
		dirs = append(dirs, dir)
	}
	merged := filepath.Join(tmp, "merged")
	stdout, stderr, code := runCLI(t, cliCase{args: append([]string{"merge", "--out", merged}, dirs...)})
	if code != 0 || !strings.Contains(stdout, "merged 18 runs") || strings.Contains(stderr, "missing") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--shard", "env", "--out", filepath.Join(tmp, "x")}}); code != 2 || !strings.Contains(stderr, "no shard index") {
		t.Errorf("no index: exit %d: %s", code, stderr)
	}
}

// namedActor stands for an actor by its spec when only run ids matter.
type namedActor string

func (a namedActor) Name() string { return string(a) }
func (a namedActor) Propose(context.Context, actors.Request) (actors.Response, error) {
	return actors.Response{}, errors.New("not run")
}

// shardRun is what one shard's command does: its run ids and directory.
type shardRun struct {
	ids   []string
	out   string
	shard runner.Shard
	// same holds the arguments but --shard and --out, which every shard
	// must share.
	same string
}

// shardOf parses the arguments of one "patchbench run" the way run does
// (its flags; --shard env from env) and returns its shard and directory.
func shardOf(t *testing.T, args []string, env map[string]string) (*runFlags, *flagSet, shardRun) {
	t.Helper()
	fs, f := newRunFlags(io.Discard, io.Discard)
	var errb bytes.Buffer
	fs.stderr = &errb
	if err := fs.parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	sh, err := f.check(&errb, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("%q with %v: %v %s", args, env, err, errb.String())
	}
	var same []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--shard" || args[i] == "--out" {
			i++
			continue
		}
		same = append(same, args[i])
	}
	return f, fs, shardRun{out: *f.out, shard: sh, same: strings.Join(same, " ")}
}

// planShards reads the arguments and environment of each shard's command,
// lists the runs of the whole command (no shard) once, and gives each
// shard the runs its shard holds, as runner.Options.Jobs picks them.
func planShards(t *testing.T, args [][]string, envs []map[string]string) ([]shardRun, int) {
	t.Helper()
	var shards []shardRun
	for i := range args {
		_, _, s := shardOf(t, args[i], envs[i])
		if i > 0 && s.same != shards[0].same {
			t.Errorf("shard %d runs %q, shard 0 %q: shards must differ only in --shard and --out", i, s.same, shards[0].same)
		}
		shards = append(shards, s)
	}
	f, fs, _ := shardOf(t, args[0], envs[0])
	configs, err := f.selectConfigs()
	if err != nil {
		t.Fatal(err)
	}
	var acts []actors.Actor
	for _, spec := range f.spec.ActorSpecs {
		acts = append(acts, namedActor(spec))
	}
	cases, err := f.selectCases(fs.stderr, acts)
	if err != nil {
		t.Fatal(err)
	}
	o := runner.Options{Cases: cases, Configs: configs, Actors: acts, Spec: runspec.Spec{Rounds: f.spec.Rounds}}
	all := o.Jobs()
	for i := range shards {
		o.Shard = shards[i].shard
		for _, j := range o.Jobs() {
			shards[i].ids = append(shards[i].ids, j.RunID())
		}
	}
	return shards, len(all)
}

// checkCover checks that the shards' runs cover every run of the whole
// command exactly once, each shard with its own directory.
func checkCover(t *testing.T, shards []shardRun, all int) {
	t.Helper()
	seen := map[string]int{}
	outs := map[string]bool{}
	for _, s := range shards {
		if s.out == "" || outs[s.out] {
			t.Errorf("shard %+v: no --out, or one another shard uses", s.shard)
		}
		outs[s.out] = true
		if s.shard.Of != len(shards) {
			t.Errorf("shard %d/%d among %d shards", s.shard.Index, s.shard.Of, len(shards))
		}
		for _, id := range s.ids {
			seen[id]++
		}
	}
	if len(seen) != all {
		t.Errorf("the shards cover %d runs of %d", len(seen), all)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("run %s is in %d shards", id, n)
		}
	}
}

func readYAMLDocs(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []map[string]any
	for {
		var d map[string]any
		if err := dec.Decode(&d); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// get walks a decoded YAML value by map keys and list indexes.
func get(t *testing.T, v any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k.(string)]
		case []any:
			if i := k.(int); i < len(x) {
				v = x[i]
			} else {
				v = nil
			}
		default:
			v = nil
		}
		if v == nil {
			t.Fatalf("no %v in %v", k, keys)
		}
	}
	return v
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestShardManifests parses scripts/k8s/patchbench-shards.yaml (with
// patchbench-merge.yaml) and scripts/github/patchbench-shards.yml and
// checks that the shard arguments of their pods or jobs, read as run reads
// them, cover every run of the command exactly once, each shard in its own
// directory, and that the merge step takes every shard's directory.
func TestShardManifests(t *testing.T) {
	t.Run("kubernetes", func(t *testing.T) {
		var job, pvc map[string]any
		for _, d := range readYAMLDocs(t, "../../scripts/k8s/patchbench-shards.yaml") {
			switch d["kind"] {
			case "Job":
				job = d
			case "PersistentVolumeClaim":
				pvc = d
			}
		}
		if job == nil || pvc == nil || get(t, job, "spec", "completionMode") != "Indexed" {
			t.Fatal("no Indexed Job and volume claim")
		}
		completions := get(t, job, "spec", "completions").(int)
		if p := get(t, job, "spec", "parallelism").(int); p < 1 || p > completions {
			t.Errorf("parallelism %d of %d completions", p, completions)
		}
		pod := get(t, job, "spec", "template", "spec")
		c := get(t, pod, "containers", 0)
		args := strs(t, get(t, c, "args"))
		if args[0] != "run" {
			t.Fatalf("the shard pods run %q", args)
		}
		mount := mountOf(t, pod, c, get(t, pvc, "metadata", "name").(string))
		var allArgs [][]string
		var envs []map[string]string
		for i := 0; i < completions; i++ {
			env := map[string]string{}
			for _, e := range get(t, c, "env").([]any) {
				e := e.(map[string]any)
				name := e["name"].(string)
				switch {
				case e["value"] != nil:
					env[name] = e["value"].(string)
				case strings.Contains(fmt.Sprint(e["valueFrom"]), "batch.kubernetes.io/job-completion-index"):
					env[name] = strconv.Itoa(i)
				default:
					env[name] = "from a secret"
				}
			}
			env["JOB_COMPLETION_INDEX"] = strconv.Itoa(i) // the Job controller sets it too
			var expanded []string
			for _, a := range args[1:] {
				expanded = append(expanded, k8sVar.ReplaceAllStringFunc(a, func(m string) string {
					v, ok := env[k8sVar.FindStringSubmatch(m)[1]]
					if !ok {
						t.Errorf("%s is not in the container's environment", m)
					}
					return v
				}))
			}
			allArgs, envs = append(allArgs, expanded), append(envs, env)
		}
		shards, all := planShards(t, allArgs, envs)
		for i, s := range shards {
			if !strings.HasPrefix(s.out, mount+"/") {
				t.Errorf("shard %d writes %s, outside the shared volume at %s", i, s.out, mount)
			}
		}
		checkCover(t, shards, all)

		docs := readYAMLDocs(t, "../../scripts/k8s/patchbench-merge.yaml")
		mpod := get(t, docs[0], "spec", "template", "spec")
		mc := get(t, mpod, "initContainers", 0)
		margs := strs(t, get(t, mc, "args"))
		if margs[0] != "merge" || margs[1] != "--out" {
			t.Fatalf("the merge step runs %q", margs)
		}
		if mountOf(t, mpod, mc, get(t, pvc, "metadata", "name").(string)) != mount {
			t.Error("the merge step mounts the volume elsewhere")
		}
		var outs []string
		for _, s := range shards {
			outs = append(outs, s.out)
		}
		slices.Sort(outs)
		dirs := slices.Clone(margs[3:])
		slices.Sort(dirs)
		if !slices.Equal(outs, dirs) || slices.Contains(outs, margs[2]) {
			t.Errorf("the merge step takes %q into %s; the shards write %q", dirs, margs[2], outs)
		}
		if rargs := strs(t, get(t, mpod, "containers", 0, "args")); !slices.Equal(rargs, []string{"report", margs[2]}) {
			t.Errorf("the report step runs %q", rargs)
		}
	})

	t.Run("github actions", func(t *testing.T) {
		wf := readYAMLDocs(t, "../../scripts/github/patchbench-shards.yml")[0]
		inputs := map[string]string{}
		for name, in := range get(t, wf, "on", "workflow_dispatch", "inputs").(map[string]any) {
			inputs[name] = fmt.Sprint(in.(map[string]any)["default"])
		}
		jobs := get(t, wf, "jobs").(map[string]any)
		var shardJob, mergeJob string
		for name, j := range jobs {
			if _, ok := j.(map[string]any)["strategy"]; ok {
				shardJob = name
			} else {
				mergeJob = name
			}
		}
		job := jobs[shardJob].(map[string]any)
		matrix := get(t, job, "strategy", "matrix").(map[string]any)
		combos := []map[string]string{{}}
		for dim, vals := range matrix {
			var next []map[string]string
			for _, c := range combos {
				for _, v := range vals.([]any) {
					m := map[string]string{dim: fmt.Sprint(v)}
					for k, x := range c {
						m[k] = x
					}
					next = append(next, m)
				}
			}
			combos = next
		}
		var allArgs [][]string
		var envs []map[string]string
		var artifacts []string
		for k, combo := range combos {
			ctx := map[string]string{"strategy.job-index": strconv.Itoa(k), "strategy.job-total": strconv.Itoa(len(combos))}
			for d, v := range combo {
				ctx["matrix."+d] = v
			}
			for n, v := range inputs {
				ctx["inputs."+n] = v
			}
			env := map[string]string{}
			for n, v := range job["env"].(map[string]any) {
				env[n] = ghExpand(t, fmt.Sprint(v), ctx)
			}
			var runArgs []string
			for _, st := range job["steps"].([]any) {
				st := st.(map[string]any)
				if cmd, ok := st["run"].(string); ok && strings.Contains(cmd, "patchbench run") {
					words := shellWords(t, ghExpand(t, cmd, ctx), env)
					runArgs = words[slices.Index(words, "run")+1:]
				}
				if strings.HasPrefix(fmt.Sprint(st["uses"]), "actions/upload-artifact") {
					artifacts = append(artifacts, ghExpand(t, get(t, st, "with", "name").(string), ctx))
					if p := ghExpand(t, get(t, st, "with", "path").(string), ctx); runArgs != nil && !strings.Contains(strings.Join(runArgs, " "), "--out "+p) {
						t.Errorf("the artifact holds %s, not the shard's --out", p)
					}
				}
			}
			if runArgs == nil {
				t.Fatal("no patchbench run step")
			}
			allArgs, envs = append(allArgs, runArgs), append(envs, env)
		}
		shards, all := planShards(t, allArgs, envs)
		checkCover(t, shards, all)

		merge := jobs[mergeJob].(map[string]any)
		if fmt.Sprint(merge["needs"]) != shardJob {
			t.Errorf("the merge job needs %v", merge["needs"])
		}
		var downloaded []string
		var margs []string
		for _, st := range merge["steps"].([]any) {
			st := st.(map[string]any)
			if strings.HasPrefix(fmt.Sprint(st["uses"]), "actions/download-artifact") {
				pattern, dir := get(t, st, "with", "pattern").(string), get(t, st, "with", "path").(string)
				for _, a := range artifacts {
					if ok, _ := path.Match(pattern, a); ok {
						downloaded = append(downloaded, path.Join(dir, a))
					}
				}
			}
			if cmd, ok := st["run"].(string); ok && strings.Contains(cmd, "patchbench merge") {
				words := shellWords(t, cmd, nil)
				margs = words[slices.Index(words, "merge")+1:]
			}
		}
		if len(downloaded) != len(shards) || len(margs) < 3 || margs[0] != "--out" {
			t.Fatalf("downloaded %q, merge %q", downloaded, margs)
		}
		for _, d := range downloaded {
			n := 0
			for _, g := range margs[2:] {
				if ok, _ := path.Match(g, d); ok {
					n++
				}
			}
			if n != 1 || d == margs[1] {
				t.Errorf("the merge takes %s %d times", d, n)
			}
		}
	})
}

// mountOf returns where container c of pod mounts the claim.
func mountOf(t *testing.T, pod, c any, claim string) string {
	t.Helper()
	vol := ""
	for _, v := range get(t, pod, "volumes").([]any) {
		v := v.(map[string]any)
		if fmt.Sprint(get(t, v, "persistentVolumeClaim", "claimName")) == claim {
			vol = v["name"].(string)
		}
	}
	for _, m := range get(t, c, "volumeMounts").([]any) {
		if m := m.(map[string]any); m["name"] == vol {
			return m["mountPath"].(string)
		}
	}
	t.Fatalf("the container does not mount claim %s", claim)
	return ""
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// ghExpand substitutes GitHub Actions expressions from ctx; secrets stand
// for themselves, and any other expression fails the test.
func ghExpand(t *testing.T, s string, ctx map[string]string) string {
	t.Helper()
	return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
		e := ghExpr.FindStringSubmatch(m)[1]
		if v, ok := ctx[e]; ok {
			return v
		}
		if strings.HasPrefix(e, "secrets.") || strings.HasPrefix(e, "github.") {
			return e
		}
		t.Errorf("unknown expression %s", m)
		return m
	})
}

// shellWords splits a one-line shell command into words: quotes, and $NAME
// or ${NAME} from env (unquoted globs are kept as words).
func shellWords(t *testing.T, s string, env map[string]string) []string {
	t.Helper()
	s = strings.ReplaceAll(strings.TrimSpace(s), "\\\n", " ")
	if strings.ContainsAny(s, "\n;|&`") {
		t.Fatalf("not one simple command: %q", s)
	}
	varRef := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	expand := func(w string) string {
		return varRef.ReplaceAllStringFunc(w, func(m string) string { return env[varRef.FindStringSubmatch(m)[1]] })
	}
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				t.Fatalf("unterminated quote in %q", s)
			}
			w.WriteString(expand(s[i+1 : i+1+j]))
			i += j + 1
			in = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unterminated quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case ch == '$':
			m := varRef.FindString(s[i:])
			w.WriteString(expand(m))
			i += len(m) - 1
			in = true
		default:
			w.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
