package bench

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

// records is the array at ptr in a grown case's state, as objects.
func records(t *testing.T, c *Case, ptr string) []map[string]any {
	t.Helper()
	p, err := runtime.ParsePointer(ptr)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := runtime.Lookup(c.State.Value(), p)
	if !ok {
		t.Fatalf("nothing at %s", ptr)
	}
	var out []map[string]any
	for _, r := range v.([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

// A grown refill queue is linked data: generated prescriptions get fresh
// rx_numbers counting on from the largest (the member's name does not
// say id), each naming a patient of the pharmacy, generated patients
// included; generated queue items each name a different prescription,
// generated ones included.
func TestGrowIDsAndLinks(t *testing.T) {
	c := embeddedCase(t, "med-pharmacy-refill")
	g, err := c.Grown(Scale{Bytes: 300_000}, DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	patients := records(t, g, "/patients")
	rxs := records(t, g, "/prescriptions")
	queue := records(t, g, "/rx_queue")
	ownPatients, ownRx, ownQueue := 3, 3, 3
	if len(patients) <= ownPatients || len(rxs) <= ownRx || len(queue) <= ownQueue {
		t.Fatalf("grown to %d patients, %d prescriptions, %d queue items", len(patients), len(rxs), len(queue))
	}
	patientIDs := map[string]bool{}
	for _, p := range patients {
		patientIDs[p["patient_id"].(string)] = true
	}
	rxNumbers := map[string]bool{}
	generatedPatient := 0
	for i, r := range rxs {
		n := r["rx_number"].(string)
		if rxNumbers[n] {
			t.Errorf("rx_number %s held twice", n)
		}
		rxNumbers[n] = true
		if i >= ownRx {
			if want := numbered("RX-604588", 604589+i-ownRx); n != want {
				t.Errorf("generated prescription %d has rx_number %s, want %s (counting on from RX-604588)", i, n, want)
			}
			pid := r["patient_id"].(string)
			if !patientIDs[pid] {
				t.Errorf("generated prescription %s names patient %s, who is not in /patients", n, pid)
			}
			if lastNumber(pid) > 1315 {
				generatedPatient++
			}
		}
	}
	if generatedPatient == 0 {
		t.Error("no generated prescription names a generated patient")
	}
	linked := map[string]bool{}
	generatedRx := 0
	for _, q := range queue[ownQueue:] {
		n := q["rx_number"].(string)
		if !rxNumbers[n] {
			t.Errorf("queue item %v names prescription %s, which is not in /prescriptions", q["queue_id"], n)
		}
		if linked[n] {
			t.Errorf("prescription %s is queued twice, but the link is unique", n)
		}
		linked[n] = true
		if lastNumber(n) > 604588 {
			generatedRx++
		}
	}
	if generatedRx == 0 {
		t.Error("no generated queue item names a generated prescription")
	}
}

// linkedCase is the refill case with a small state of its own: /a
// records name /b records, and /a comes first in the state's key order.
func linkedCase(t *testing.T, grow []Grow) *Case {
	t.Helper()
	c := *embeddedCase(t, "med-pharmacy-refill")
	doc, err := runtime.ParseDocument([]byte(`{"a": [{"id": "A-01", "b_ref": "B-100", "note": "first"}],
		"b": [{"code": "B-100", "name": "Ann Lee"}, {"code": "B-101", "name": "Bo Chan"}], "c": {"x": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	c.State = doc
	c.Grow = grow
	return &c
}

func ptr(t *testing.T, s string) runtime.Pointer {
	t.Helper()
	p, err := runtime.ParsePointer(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A link to a collection that comes later in the state draws among its
// generated records too (they are written ahead), and the state is the
// same bytes on every growth.
func TestGrowLinkAhead(t *testing.T) {
	grow := []Grow{
		{Path: ptr(t, "/a"), Links: []GrowLink{{Member: "b_ref", To: ptr(t, "/b"), Key: "code"}}},
		{Path: ptr(t, "/b"), IDs: []string{"code"}},
	}
	c := linkedCase(t, grow)
	g, err := c.Grown(Scale{Bytes: 20_000}, DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.Grown(Scale{Bytes: 20_000}, DefaultScaleSeed)
	if string(again.State.Bytes()) != string(g.State.Bytes()) {
		t.Error("two growths differ")
	}
	codes := map[string]bool{}
	for i, r := range records(t, g, "/b") {
		code := r["code"].(string)
		if i >= 2 && code != numbered("B-100", 100+i) {
			t.Errorf("generated b %d has code %s", i, code)
		}
		codes[code] = true
	}
	generated := 0
	for _, r := range records(t, g, "/a")[1:] {
		ref := r["b_ref"].(string)
		if !codes[ref] {
			t.Errorf("generated a %v names b %s, which does not exist", r["id"], ref)
		}
		if ref != "B-100" && ref != "B-101" {
			generated++
		}
	}
	if generated == 0 {
		t.Error("no generated a names a generated b")
	}
}

// Bad ids and links are grow errors, each saying what is wrong.
func TestGrowLinksBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("grows cases with bad links")
	}
	a, b := ptr(t, "/a"), ptr(t, "/b")
	link := func(member, to, key string) GrowLink {
		return GrowLink{Member: member, To: ptr(t, to), Key: key}
	}
	for _, tt := range []struct {
		name string
		grow []Grow
		want string
	}{
		{"missing member", []Grow{{Path: a, Links: []GrowLink{link("c_ref", "/b", "code")}}}, `"c_ref" is not a member of the records of /a`},
		{"no key", []Grow{{Path: a, Links: []GrowLink{{Member: "b_ref", To: b}}}}, "a link needs member, to and key"},
		{"nothing there", []Grow{{Path: a, Links: []GrowLink{link("b_ref", "/z", "code")}}}, "to: nothing at /z"},
		{"not a collection", []Grow{{Path: a, Links: []GrowLink{link("b_ref", "/c/x", "code")}}}, "is not an array or an object of records"},
		{"key missing", []Grow{{Path: a, Links: []GrowLink{link("b_ref", "/b", "zip")}}}, `key "zip": record 0 of /b holds no string or number there`},
		{"itself", []Grow{{Path: a, Links: []GrowLink{link("b_ref", "/a", "id")}}}, "is the collection itself"},
		{"inside a grown one", []Grow{{Path: a, Links: []GrowLink{link("b_ref", "/b/0", "code")}}, {Path: b}}, "lies inside grown collection /b"},
		{"cycle", []Grow{
			{Path: a, Links: []GrowLink{link("b_ref", "/b", "code")}},
			{Path: b, Links: []GrowLink{link("name", "/a", "id")}},
		}, "lead back to it"},
		{"fixed and linked", []Grow{{Path: a, Fixed: map[string]any{"b_ref": "B-100"}, Links: []GrowLink{link("b_ref", "/b", "code")}}}, `member "b_ref" of the records of /a is both fixed and a link`},
		{"linked twice", []Grow{{Path: a, Links: []GrowLink{link("b_ref", "/b", "code"), link("b_ref", "/b", "name")}}}, "listed twice as a link"},
		{"unique runs out", []Grow{{Path: a, Links: []GrowLink{{Member: "b_ref", To: b, Key: "code", Unique: true}}}}, "the 2 records it may draw of /b are all linked already"},
		{"generated of a fixed collection", []Grow{{Path: a, Links: []GrowLink{{Member: "b_ref", To: b, Key: "code", Generated: true}}}}, "generated: /b does not grow"},
		{"id not a member", []Grow{{Path: b, IDs: []string{"serial"}}}, `id member "serial" is not a member of the records of /b`},
		{"id not a string", []Grow{{Path: ptr(t, "/c"), IDs: []string{"x"}}}, "records of /c are not objects"},
	} {
		c := linkedCase(t, tt.grow)
		if _, err := c.Grown(Scale{Bytes: 20_000}, DefaultScaleSeed); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.want)
		}
	}
	// An id member holding a number is no id pattern.
	c := linkedCase(t, nil)
	doc, _ := runtime.ParseDocument([]byte(`{"a": [{"id": 7, "b_ref": "B-100"}], "b": [{"code": "B-100"}]}`))
	c.State = doc
	c.Grow = []Grow{{Path: a, IDs: []string{"id"}}}
	if _, err := c.Grown(Scale{Bytes: 20_000}, DefaultScaleSeed); err == nil || !strings.Contains(err.Error(), `id member "id" of the records of /a holds no string`) {
		t.Errorf("a numeric id member: error %v", err)
	}
}

// Fresh ids of two collections in one pattern never meet: each counts on
// from its own largest, skipping the ids the other has generated.
func TestGrowIDsNeverMeet(t *testing.T) {
	c := linkedCase(t, []Grow{{Path: ptr(t, "/a"), IDs: []string{"id"}}, {Path: ptr(t, "/b"), IDs: []string{"code"}}})
	doc, err := runtime.ParseDocument([]byte(`{"a": [{"id": "X-01", "b_ref": "X-02"}], "b": [{"code": "X-02", "name": "Ann Lee"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c.State = doc
	g, err := c.Grown(Scale{Bytes: 20_000}, DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, col := range []struct{ path, member string }{{"/a", "id"}, {"/b", "code"}} {
		for _, r := range records(t, g, col.path) {
			id := r[col.member].(string)
			if prev, ok := seen[id]; ok {
				t.Fatalf("id %s is held in %s and in %s", id, prev, col.path)
			}
			seen[id] = col.path
		}
	}
}
