package actors

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/tools"
)

// TestBulkCopiesWholeRecords: an object written whole from a record's
// members becomes a copy of the record; a container of such objects is
// written empty and each record copied in; a value built from no record,
// and every other operation, are sent as the reference has them, in both
// protocols.
func TestBulkCopiesWholeRecords(t *testing.T) {
	var view any
	if err := json.Unmarshal([]byte(`{
		"contacts": [
			{"id": "C-1", "first_name": "Ada", "lang": "nl", "score": 4.50},
			{"id": "C-2", "first_name": "Wout", "lang": "fr", "score": 3}
		],
		"export": {"rows": {}, "count": 0, "audit": []}
	}`), &view); err != nil {
		t.Fatal(err)
	}
	ref := `{"patch": [
		{"op": "replace", "path": "/export/rows", "value": {"C-1": {"id": "C-1", "first_name": "Ada", "score": 4.5}, "C-2": {"id": "C-2", "first_name": "Wout"}}},
		{"op": "add", "path": "/export/first", "value": {"id": "C-2", "lang": "fr"}},
		{"op": "add", "path": "/export/other", "value": {"id": "C-2", "lang": "de"}},
		{"op": "replace", "path": "/export/count", "value": 2},
		{"op": "add", "path": "/export/audit/-", "value": {"event": "rows built"}}
	], "note": "Built two rows."}`
	want := `{"note":"Built two rows.","patch":[` +
		`{"op":"replace","path":"/export/rows","value":{}},` +
		`{"from":"/contacts/0","op":"copy","path":"/export/rows/C-1"},` +
		`{"from":"/contacts/1","op":"copy","path":"/export/rows/C-2"},` +
		`{"from":"/contacts/1","op":"copy","path":"/export/first"},` +
		`{"op":"add","path":"/export/other","value":{"id":"C-2","lang":"de"}},` +
		`{"op":"replace","path":"/export/count","value":2},` +
		`{"op":"add","path":"/export/audit/-","value":{"event":"rows built"}}]}`
	resp, err := Bulk{}.Propose(context.Background(), Request{StepID: "s", View: view, Reference: []byte(ref)})
	if err != nil || resp.Raw != want {
		t.Errorf("json protocol:\n%s\nwant\n%s (%v)", resp.Raw, want, err)
	}
	resp, err = Bulk{}.Propose(context.Background(), Request{StepID: "s", View: view, Reference: []byte(ref), Tools: []tools.Spec{}})
	if err != nil || len(resp.Calls) != 1 || resp.Calls[0].Arguments != want || !strings.HasPrefix(resp.Calls[0].ID, "propose_") {
		t.Errorf("tools protocol: %+v (%v)", resp, err)
	}
	if _, err := (Bulk{}).Propose(context.Background(), Request{StepID: "s", View: view, Reference: []byte(`[`)}); err == nil {
		t.Error("a broken reference was taken")
	}
}

// An appended object (".../-") that holds a record's members is appended
// without them, and the record is copied into the element by the index
// it takes: the array's length in the view plus the patch's earlier
// appends (a bug whose context block is a crash report's).
func TestBulkCopiesIntoAppendedElements(t *testing.T) {
	var view any
	if err := json.Unmarshal([]byte(`{
		"reports": [{"id": "R-1", "context": {"net": "wifi", "locale": "de", "user": null}}, {"id": "R-2", "context": {"net": "lte", "locale": "fr", "user": null}}],
		"bugs": [{"crash_id": "R-0"}]
	}`), &view); err != nil {
		t.Fatal(err)
	}
	ref := `{"patch": [
		{"op": "add", "path": "/bugs/-", "value": {"crash_id": "R-1", "context": {"net": "wifi", "locale": "de"}}},
		{"op": "add", "path": "/bugs/-", "value": {"crash_id": "R-2", "context": {"net": "lte", "locale": "fr"}}}
	], "note": "Filed two."}`
	want := `{"note":"Filed two.","patch":[` +
		`{"op":"add","path":"/bugs/-","value":{"crash_id":"R-1"}},` +
		`{"from":"/reports/0/context","op":"copy","path":"/bugs/1/context"},` +
		`{"op":"add","path":"/bugs/-","value":{"crash_id":"R-2"}},` +
		`{"from":"/reports/1/context","op":"copy","path":"/bugs/2/context"}]}`
	resp, err := Bulk{}.Propose(context.Background(), Request{StepID: "s", View: view, Reference: []byte(ref)})
	if err != nil || resp.Raw != want {
		t.Errorf("got\n%s\nwant\n%s (%v)", resp.Raw, want, err)
	}
}
