package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

// shardSource is an environment that says which shard a process is: the
// variable holding its index (from base: 0 or 1) and, when the engine
// passes it, the one holding the count.
type shardSource struct {
	engine, index, count string
	base                 int
}

// shardCountVar is the count a Kubernetes Indexed Job (or any engine that
// passes none) is given in: set it to the Job's completions.
const shardCountVar = "PATCHBENCH_SHARD_COUNT"

// shardSources are the environments --shard env reads, in this order.
var shardSources = []shardSource{
	{engine: "PatchBench", index: "PATCHBENCH_SHARD_INDEX", count: shardCountVar},
	{engine: "a Kubernetes Indexed Job", index: "JOB_COMPLETION_INDEX"},
	{engine: "GitLab CI parallel", index: "CI_NODE_INDEX", count: "CI_NODE_TOTAL", base: 1},
	{engine: "CircleCI parallelism", index: "CIRCLE_NODE_INDEX", count: "CIRCLE_NODE_TOTAL"},
	{engine: "Buildkite parallelism", index: "BUILDKITE_PARALLEL_JOB", count: "BUILDKITE_PARALLEL_JOB_COUNT"},
}

// resolveShard reads --shard: "" (every run), "i/n", or "env" or "env/n",
// which take the index (and the count, unless n is given) from the
// environment getenv reads (shardSources: PatchBench's own variables, a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX with PATCHBENCH_SHARD_COUNT,
// a CI's parallel job variables): the first source whose index is set
// decides, and the counts given (n, the source's count variable,
// PATCHBENCH_SHARD_COUNT) must agree. It returns the shard and, for env,
// what it was read from; errors name the variables.
func resolveShard(spec string, getenv func(string) string) (runner.Shard, string, error) {
	if spec == "" {
		return runner.Shard{}, "", nil
	}
	rest, isEnv := strings.CutPrefix(spec, "env")
	if !isEnv {
		i, n, ok := strings.Cut(spec, "/")
		si, err1 := strconv.Atoi(i)
		sn, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || sn < 1 || sn > rundir.MaxShards || si < 0 || si >= sn {
			return runner.Shard{}, "", fmt.Errorf("--shard %q: want i/n with 0 ≤ i < n ≤ %d, or env", spec, rundir.MaxShards)
		}
		return runner.Shard{Index: si, Of: sn}, "", nil
	}
	var counts []shardValue
	if rest != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(rest, "/"))
		if !strings.HasPrefix(rest, "/") || err != nil {
			return runner.Shard{}, "", fmt.Errorf("--shard %q: want env or env/n", spec)
		}
		counts = append(counts, shardValue{"--shard " + spec, n})
	}
	var src *shardSource
	var names []string
	for k := range shardSources {
		names = append(names, shardSources[k].index)
		if src == nil && strings.TrimSpace(getenv(shardSources[k].index)) != "" {
			src = &shardSources[k]
		}
	}
	if src == nil {
		return runner.Shard{}, "", fmt.Errorf("--shard env: no shard index in the environment (%s)", strings.Join(names, ", "))
	}
	index, err := envInt(getenv, src.index)
	if err != nil {
		return runner.Shard{}, "", err
	}
	from := []string{index.from}
	for _, name := range []string{src.count, shardCountVar} {
		if name == "" || strings.TrimSpace(getenv(name)) == "" || hasSource(counts, name) {
			continue
		}
		c, err := envInt(getenv, name)
		if err != nil {
			return runner.Shard{}, "", err
		}
		counts = append(counts, c)
	}
	if len(counts) == 0 {
		return runner.Shard{}, "", fmt.Errorf("--shard env: %s is set but not the number of shards: give --shard env/n, or set %s (a Kubernetes Indexed Job does not pass its completions)", src.index, shardCountVar)
	}
	for _, c := range counts[1:] {
		if c.n != counts[0].n {
			return runner.Shard{}, "", fmt.Errorf("--shard env: %s and %s disagree", counts[0].from, c.from)
		}
	}
	for _, c := range counts {
		from = append(from, c.from)
	}
	i, n := index.n-src.base, counts[0].n
	if n < 1 || n > rundir.MaxShards || i < 0 || i >= n {
		return runner.Shard{}, "", fmt.Errorf("--shard env: shard %d of %d (%s): want 0 ≤ index < count ≤ %d", i, n, strings.Join(from, ", "), rundir.MaxShards)
	}
	return runner.Shard{Index: i, Of: n}, fmt.Sprintf("shard %d/%d, from %s (%s)", i, n, src.engine, strings.Join(from, ", ")), nil
}

// envInt reads an integer variable.
func envInt(getenv func(string) string, name string) (shardValue, error) {
	v := strings.TrimSpace(getenv(name))
	n, err := strconv.Atoi(v)
	if err != nil {
		return shardValue{}, fmt.Errorf("--shard env: %s=%q is not an integer", name, v)
	}
	return shardValue{name + "=" + v, n}, nil
}

// shardValue is a number --shard env read, and where from.
type shardValue struct {
	from string
	n    int
}

func hasSource(vs []shardValue, name string) bool {
	for _, v := range vs {
		if strings.HasPrefix(v.from, name+"=") {
			return true
		}
	}
	return false
}

// shardString is a shard as the manifest records it: "i/n", or "" for
// every run.
func shardString(spec string, sh runner.Shard) string {
	if spec == "" {
		return ""
	}
	return fmt.Sprintf("%d/%d", sh.Index, sh.Of)
}
