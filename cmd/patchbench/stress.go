package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runner"
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
	var objects []json.RawMessage // --format json with attacks: one per attack
	mismatched := false
	for i, a := range attacks {
		name, attacked := bench.AttackCase, cases
		if a != nil {
			name, attacked = a.Name, make([]*bench.Case, len(cases))
			for k, c := range cases {
				if attacked[k], err = c.Attacked(a); err != nil {
					return failf(stderr, "stress", "%v", err)
				}
			}
		}
		res, err := runner.Stress(ctx, attacked, configs)
		if err != nil {
			return failf(stderr, "stress", "%v", err)
		}
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
		switch {
		case *format == "json" && plain:
			b, _ := json.MarshalIndent(res, "", "  ")
			fmt.Fprintf(stdout, "%s\n", b)
		case *format == "json":
			objects = append(objects, withAttack(name, res))
		default:
			if !plain {
				if i > 0 {
					fmt.Fprintln(stdout)
				}
				fmt.Fprintf(stdout, "Attack: %s\n", name)
			}
			report.WriteStress(stdout, res, configs)
		}
	}
	if objects != nil {
		b, _ := json.MarshalIndent(objects, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	}
	if mismatched {
		return exitNegative
	}
	return exitOK
}

// withAttack is v, a value that encodes as a JSON object (the stress
// test's result), with an "attack" member first: stress --format json
// with attacks prints one per attack.
func withAttack(attack string, v any) json.RawMessage {
	name, _ := json.Marshal(attack) // a string always encodes
	b, _ := json.Marshal(v)         // the result holds strings and numbers
	out := append([]byte(`{"attack":`), name...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}
