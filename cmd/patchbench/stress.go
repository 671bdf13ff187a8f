package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/scoring"
)

const stressExamples = `  # Every artifact of the embedded suite against every configuration:
  patchbench stress

  # As JSON, for another case set:
  patchbench stress --cases my-cases --format json

  # The cases' planted injections worded by two attacks (a table each):
  patchbench stress --attack ignore_previous,important_instructions
`

// runStress runs the no-model stress test and prints accepted/total per
// category and configuration, and the paper's hidden-source set. Exit 1
// when an artifact is not caught as its caught_by says: a configuration's
// decision differs from it, a gate it does not name rejects it, or a gate
// it names does not catch it on its own. With --attack (or
// --attack-file) the test runs once per attack, on the cases with their
// planted injections worded by it (bench.Case.Attacked), a table (or a
// JSON object) each.
func runStress(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("stress", "patchbench stress [--format text|json] [--cases DIR] [--configs DIR] [--attack NAMES] [--attack-file FILE]", stressExamples, stdout, stderr)
	format := fs.choice("format", "text", "output `format`: text or json", "text", "json")
	casesDir := fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	configsDir := fs.String("configs", "", "the configurations `dir` (default: the embedded six)")
	var attackNames stringList
	fs.Var(&attackNames, "attack", "the `attacks` that word the cases' planted prompt injections, as run --attack (default case: as the case writes them); a comma list or the flag repeated tests each")
	attackFile := fs.String("attack-file", "", "an attack template `file` (Go text/template; docs/cases.md, \"Attacks\") added to --attack")
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	attacks, flag, err := parseAttacks(attackNames.String(), *attackFile)
	if err != nil {
		return fs.exit(usagef("--%s: %v", flag, err))
	}
	configs, err := loadConfigs(*configsDir)
	if err != nil {
		return failf(stderr, "stress", "%v", err)
	}
	cases, err := loadAllCases(*casesDir)
	if err != nil {
		return fs.exit(err)
	}
	// The default attack alone prints as stress always has: one table,
	// or one JSON object.
	plain := len(attacks) == 1 && attacks[0] == nil
	var results []attackStress
	mismatched := false
	for _, a := range attacks {
		name, attacked := bench.AttackCase, cases
		if a != nil {
			name, attacked = a.Name, make([]*bench.Case, len(cases))
			for i, c := range cases {
				if attacked[i], err = c.Attacked(a); err != nil {
					return failf(stderr, "stress", "%v", err)
				}
			}
		}
		res, err := runner.Stress(ctx, attacked, configs)
		if err != nil {
			return failf(stderr, "stress", "%v", err)
		}
		results = append(results, attackStress{Attack: name, StressResult: res})
		prefix := ""
		if !plain {
			prefix = "attack " + name + ": "
		}
		for _, m := range res.Mismatches {
			sep := ": "
			if m.Config != "" {
				sep = " "
			}
			fmt.Fprintf(stderr, "mismatch: %scase %s artifact %s%s%s\n", prefix, m.Case, m.Artifact, sep, m.Reason)
			mismatched = true
		}
	}
	switch {
	case *format == "json" && plain:
		b, _ := json.MarshalIndent(results[0].StressResult, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	case *format == "json":
		b, _ := json.MarshalIndent(results, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	default:
		for i, r := range results {
			if !plain {
				if i > 0 {
					fmt.Fprintln(stdout)
				}
				fmt.Fprintf(stdout, "Attack: %s\n", r.Attack)
			}
			report.WriteStress(stdout, r.StressResult, configs)
		}
	}
	if mismatched {
		return exitNegative
	}
	return exitOK
}

// attackStress is the stress test's result under one attack, as stress
// --format json prints it when attacks are given: the attack's name next
// to the result's members.
type attackStress struct {
	Attack string `json:"attack"`
	*scoring.StressResult
}
