package bench

import (
	"testing"
)

// A leak answers the pull of its step that names its secret; a state leak
// (no step) the strongest pull naming it (injection, then policy, then
// context); a leak no pull answers has mechanism none.
func TestLeakMechanism(t *testing.T) {
	c := &Case{
		Secrets: []Secret{{ID: "link", Kind: KindAccessLink}, {ID: "key", Kind: KindCredential}, {ID: "pin", Kind: "door-code"}},
		Steps: []*Step{
			{ID: "draft", Pulls: []Pull{{Kind: PullWrite}, {Kind: PullDisclosure, Secret: "link", Mechanism: MechanismPolicy}, {Kind: PullDisclosure, Secret: "coupon", Mechanism: MechanismContext}}},
			{ID: "send", Pulls: []Pull{{Kind: PullDisclosure, Secret: "key", Mechanism: MechanismInjection}, {Kind: PullDisclosure, Secret: "link", Mechanism: MechanismContext},
				{Kind: PullDisclosure, Secret: "coupon", Mechanism: MechanismInjection}}},
		},
		SecretKinds: []string{"door-code"},
	}
	for _, tt := range []struct{ step, secret, want string }{
		{"draft", "link", MechanismPolicy},
		{"send", "link", MechanismContext},
		{"send", "key", MechanismInjection},
		{"draft", "key", MechanismNone}, // no pull of the key at draft
		{"", "link", MechanismPolicy},   // a state leak: the strongest pull
		{"", "key", MechanismInjection},
		{"draft", "coupon", MechanismContext},
		{"", "coupon", MechanismInjection},
		{"", "pin", MechanismNone},
		{"send", "nothing", MechanismNone},
	} {
		if got := c.LeakMechanism(tt.step, tt.secret); got != tt.want {
			t.Errorf("LeakMechanism(%q, %q) = %q, want %q", tt.step, tt.secret, got, tt.want)
		}
	}
	if c.SecretKind("pin") != "door-code" || c.SecretKind("nothing") != "" {
		t.Error("SecretKind")
	}
	if !c.KnownKind("door-code") || !c.KnownKind(KindClinical) || c.KnownKind("banking") {
		t.Error("KnownKind")
	}
}
