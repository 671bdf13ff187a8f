package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
)

// TestFollowerUnderAttacks: the runs cross the attacks, each run under
// an attack other than the default has "+attack" after its id and
// records the attack, and the follower, which obeys the injections the
// case registers whatever their words, has the same attack success
// under every attack as under the case's own texts, in both protocols:
// it succeeds without a verifier and fails under PatchOptic.
func TestFollowerUnderAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every attack")
	}
	all, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	var cases []*bench.Case
	for _, c := range all {
		if len(c.Injections) > 0 && len(cases) < 3 {
			cases = append(cases, c)
		}
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	configs := []*bench.Config{configNamed(t, cfgs, "unconstrained"), configNamed(t, cfgs, "patchoptic")}
	sc := Scaled{Cases: cases, Attacked: map[string][]*bench.Case{}}
	names := []string{""}
	for _, name := range bench.BuiltinAttacks() {
		a, err := bench.LookupAttack(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			ac, err := c.Attacked(a)
			if err != nil {
				t.Fatal(err)
			}
			sc.Attacked[name] = append(sc.Attacked[name], ac)
		}
		names = append(names, name)
	}
	for _, protocol := range []string{ProtocolJSON, ProtocolTools} {
		sink := &memSink{}
		o := Options{Cases: cases, Configs: configs, Actors: []actors.Actor{actors.Follower{}}, Concurrency: 1, Scales: []Scaled{sc}, Attacks: names,
			Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8, Protocol: protocol, Disclosure: DisclosureWhole}}
		if err := Run(context.Background(), o, nil, sink); err != nil {
			t.Fatal(err)
		}
		if want := len(cases) * len(configs) * len(names); len(sink.recs) != want {
			t.Fatalf("%s: %d records, want %d", protocol, len(sink.recs), want)
		}
		base := map[string]bool{} // case/config → attack success under the case's texts
		for _, r := range sink.recs {
			if r.AttackName == "" {
				if strings.Contains(r.RunID, "+") {
					t.Errorf("%s: run %s at the default names an attack", protocol, r.RunID)
				}
				base[r.Case+"/"+r.Config] = r.Attack != nil && r.Attack.Succeeded
			} else if !strings.HasSuffix(r.RunID, "+"+r.AttackName) {
				t.Errorf("%s: run %s under %s", protocol, r.RunID, r.AttackName)
			}
		}
		for _, r := range sink.recs {
			if r.Attack == nil {
				t.Fatalf("%s: run %s has no attack record", protocol, r.RunID)
			}
			if got, want := r.Attack.Succeeded, base[r.Case+"/"+r.Config]; got != want {
				t.Errorf("%s: run %s: attack success %v, %v under the case's own texts", protocol, r.RunID, got, want)
			}
			if r.Config == "patchoptic" && r.Attack.Succeeded {
				t.Errorf("%s: run %s: the attack succeeded under PatchOptic", protocol, r.RunID)
			}
		}
		won := 0
		for k, ok := range base {
			if ok && strings.HasSuffix(k, "/unconstrained") {
				won++
			}
		}
		if won == 0 {
			t.Errorf("%s: the follower's attack succeeded in no case without a verifier", protocol)
		}
	}
}
