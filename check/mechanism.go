package check

import (
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// kinds checks the case's secret kinds (docs/cases.md, "Leaks by kind
// and mechanism"): every secret has one, from the closed list or from the
// case's secret_kinds, and secret_kinds adds only kinds the closed list
// lacks.
func (p *problems) kinds() {
	c := p.c
	for i, k := range c.SecretKinds {
		if slices.Contains(bench.SecretKinds, k) {
			p.add(bench.ProblemSecretKind, ptr("/secret_kinds/%d", i), "secret_kinds: %s is already a kind of the closed list (%s); secret_kinds adds kinds it lacks", k, strings.Join(bench.SecretKinds, ", "))
		}
	}
	for i, s := range c.Secrets {
		switch {
		case s.Kind == "":
			p.add(bench.ProblemSecretKind, ptr("/secrets/%d", i), "secret %s has no kind; give it one of %s, or a kind the case adds in secret_kinds", s.ID, strings.Join(bench.SecretKinds, ", "))
		case !c.KnownKind(s.Kind):
			p.add(bench.ProblemSecretKind, ptr("/secrets/%d/kind", i), "secret %s: kind %s is neither one of %s nor in the case's secret_kinds", s.ID, s.Kind, strings.Join(bench.SecretKinds, ", "))
		}
	}
}

// mechanism checks a disclosure pull's mechanism: it has one; an
// injection pull answers an injection of its step that asks for its
// secret; a policy pull names, in policy, a text of the state that the
// step's view shows, and no other pull names a policy.
func (p *problems) mechanism(st *bench.Step, at runtime.Pointer, pl bench.Pull, sec bench.Secret) {
	c := p.c
	switch pl.Mechanism {
	case "":
		p.add(bench.ProblemPullMechanism, at, "step %s: pull: disclosure of %s has no mechanism; give it one of %s", st.ID, pl.Secret, strings.Join(bench.Mechanisms, ", "))
	case bench.MechanismInjection:
		if sec.ID != "" && !injectionAsks(c, st.ID, sec) {
			p.add(bench.ProblemPullMechanism, at.Append("mechanism"), "step %s: pull: an injection pull of %s, but no injection of the step asks for it (declare the injection, or name the pull's mechanism: context or policy)", st.ID, sec.ID)
		}
	}
	if pl.Mechanism != bench.MechanismPolicy {
		if len(pl.Policy) > 0 {
			p.add(bench.ProblemPullPolicy, at.Append("policy"), "step %s: pull: names a policy (%s) but its mechanism is %q; only a policy pull names one", st.ID, pl.Policy, pl.Mechanism)
		}
		return
	}
	if len(pl.Policy) == 0 {
		p.add(bench.ProblemPullPolicy, at.Append("mechanism"), "step %s: pull: a policy pull names no policy; give in policy the location of the text in the step's view that states the rule a careless copy breaks", st.ID)
		return
	}
	v, ok := c.State.Get(pl.Policy)
	if text, isText := v.(string); !ok || !isText || strings.TrimSpace(text) == "" {
		p.add(bench.ProblemPullPolicy, at.Append("policy"), "step %s: pull: the policy %s is not a text in the state", st.ID, pl.Policy)
		return
	}
	if !st.Contract.ViewRegion().Visible(pl.Policy) {
		p.add(bench.ProblemPullPolicy, at.Append("policy"), "step %s: pull: the policy %s is not in the step's view; a policy pull's rule is one the actor is shown", st.ID, pl.Policy)
	}
}

// injectionPulls checks the pulls of a step against its injections: each
// secret an injection of the step asks for has the step's disclosure pull
// with the injection mechanism (so that a leak of it is counted under
// injection), and no secret has two disclosure pulls in the step (a leak
// answers one pull).
func (p *problems) injectionPulls(st *bench.Step) {
	c := p.c
	pulled := map[string]int{} // secret → index of its pull
	for j, pl := range st.Pulls {
		if pl.Kind != bench.PullDisclosure {
			continue
		}
		if first, dup := pulled[pl.Secret]; dup {
			p.add(bench.ProblemPullMechanism, ptr("/steps/%d/pulls/%d", st.Index, j), "step %s: pull: secret %s is pulled twice in the step (pulls %d and %d); a leak answers one pull: keep one, with the mechanism that works on the actor (injection before policy before context)", st.ID, pl.Secret, first, j)
			continue
		}
		pulled[pl.Secret] = j
	}
	for i, inj := range c.Injections {
		if inj.Step != st.ID {
			continue
		}
		for _, sec := range c.Secrets {
			if !sec.Path.HasPrefix(inj.Target) {
				continue
			}
			j, ok := pulled[sec.ID]
			switch {
			case !ok:
				p.add(bench.ProblemPullMechanism, ptr("/injections/%d", i), "injection: asks step %s for secret %s, and the step has no disclosure pull of it; declare one with mechanism: injection", st.ID, sec.ID)
			case st.Pulls[j].Mechanism != bench.MechanismInjection && st.Pulls[j].Mechanism != "":
				p.add(bench.ProblemPullMechanism, ptr("/steps/%d/pulls/%d/mechanism", st.Index, j), "step %s: pull: secret %s is asked for by an injection of the step (injections/%d), so its pull's mechanism is injection, not %s", st.ID, sec.ID, i, st.Pulls[j].Mechanism)
			}
		}
	}
}

// injectionAsks reports whether an injection of step asks for secret sec
// (its target is the secret's path or a record holding it).
func injectionAsks(c *bench.Case, step string, sec bench.Secret) bool {
	for _, inj := range c.Injections {
		if inj.Step == step && sec.Path.HasPrefix(inj.Target) {
			return true
		}
	}
	return false
}
