package rundir

import (
	"cmp"
	"fmt"

	"github.com/patchbench/patchbench/bench"
)

// AttackNamed returns the attack of the manifest's runs named name, as the
// runs were worded by it: a built-in attack (bench.LookupAttack), or one
// read from a file, made of the template the manifest recorded
// (AttackTemplates). It returns nil for the default attack
// (bench.AttackCase, or ""). A file's attack the manifest holds no
// template of (a directory written before manifests recorded them, or a
// manifest rebuilt by repair) is an error that says so.
func (m *Manifest) AttackNamed(name string) (*bench.Attack, error) {
	if !bench.IsFileAttack(name) {
		return bench.LookupAttack(name)
	}
	text, ok := m.AttackTemplates[name]
	if !ok {
		return nil, fmt.Errorf("the manifest records no template of attack %s, which was read from a file (a run directory written before manifests recorded attack_templates, or a manifest rebuilt by repair), so the texts it planted are not known", name)
	}
	a, err := bench.ParseAttack(name, "the manifest's attack_templates", text)
	if err != nil {
		return nil, fmt.Errorf("the manifest's template of %w", err)
	}
	return a, nil
}

// RunCase is case c (rec.Case, as its case set holds it) as run rec met
// it, made as the runner makes it: grown to the run's scale (rec.Scale)
// from the manifest's scale seed (bench.Case.Grown), then with the text
// at each injection site worded by the run's attack (rec.AttackName;
// AttackNamed, bench.Case.Attacked). For a run at 1x under the default
// attack it is c itself. Show, browse and whatever else replays a run's
// states from its case read them from it.
//
// On an error the case is nil when it could not be grown, and otherwise
// (the attack could not be had: its template is not recorded, its name
// is not known, or it does not apply to the case) the case at the run's
// scale with the case's own texts at the injection sites, which are not
// the run's.
func (m *Manifest) RunCase(c *bench.Case, rec *Record) (*bench.Case, error) {
	if rec.Scale != "" {
		sc, err := bench.ParseScale(rec.Scale)
		if err != nil {
			return nil, err
		}
		if c, err = c.Grown(sc, uint64(cmp.Or(m.ScaleSeed, bench.DefaultScaleSeed))); err != nil {
			return nil, err
		}
	}
	a, err := m.AttackNamed(rec.AttackName)
	if err != nil {
		return c, err
	}
	attacked, err := c.Attacked(a)
	if err != nil {
		return c, err
	}
	return attacked, nil
}
