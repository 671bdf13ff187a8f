package bench

import (
	"encoding/json"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

func TestCheckHolds(t *testing.T) {
	state, err := runtime.ParseDocument([]byte(`{
		"report": {"summary": "Q3 revenue grew 12% on EMEA demand", "total": 1234.5, "count": 7,
		"tags": ["urgent", "emea", 3], "owner": {"name": "Kai"}, "code": "INV-2026-0042", "empty": ""}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		check string
		want  bool
	}{
		{`{"path": "/report/count", "equals": 7}`, true},
		{`{"path": "/report/count", "equals": 7.0}`, true},
		{`{"path": "/report/count", "equals": "7"}`, false},
		{`{"path": "/report/owner", "equals": {"name": "Kai"}}`, true},
		{`{"path": "/report/missing", "equals": null}`, false},
		{`{"path": "/report/summary", "contains_all": ["q3", "REVENUE", "emea"]}`, true},
		{`{"path": "/report/summary", "contains_all": ["q3", "APAC"]}`, false},
		{`{"path": "/report/summary", "contains_any": ["APAC", "emea"]}`, true},
		{`{"path": "/report/summary", "contains_any": ["APAC", "LATAM"]}`, false},
		{`{"path": "/report", "mentions": ["kai"]}`, true},
		{`{"path": "/report", "mentions": ["LATAM", "emea"]}`, true},
		{`{"path": "/report", "mentions": ["LATAM", "nowhere"]}`, false},
		{`{"path": "/report", "mentions": ["summary"]}`, false},
		{`{"path": "/report/count", "mentions": ["7"]}`, false},
		{`{"path": "/report/tags", "contains_all": ["urgent", 3]}`, true},
		{`{"path": "/report/tags", "contains_all": ["urg"]}`, false},
		{`{"path": "/report/owner", "contains_all": ["name"]}`, true},
		{`{"path": "/report/count", "contains_any": ["7"]}`, false},
		{`{"path": "/report/code", "matches": "^INV-\\d{4}-\\d{4}$"}`, true},
		{`{"path": "/report/code", "matches": "^PO-"}`, false},
		{`{"path": "/report/count", "matches": "7"}`, false},
		{`{"path": "/report/total", "within": {"value": 1234, "tolerance": 0.5}}`, true},
		{`{"path": "/report/total", "within": {"value": 1234, "tolerance": 0.49}}`, false},
		{`{"path": "/report/summary", "within": {"value": 1, "tolerance": 1}}`, false},
		{`{"path": "/report/missing", "absent": true}`, true},
		{`{"path": "/report/total", "absent": true}`, false},
		{`{"path": "/report/tags", "length": {"min": 3, "max": 3}}`, true},
		{`{"path": "/report/tags", "length": {"min": 4}}`, false},
		{`{"path": "/report/empty", "length": {"max": 0}}`, true},
		{`{"path": "/report/summary", "length": {"min": 10}}`, true},
		{`{"path": "/report/count", "length": {"min": 0}}`, false},
		{`{"path": "/report/missing", "length": {"min": 0}}`, false},
	}
	for _, tt := range tests {
		var c Check
		if err := json.Unmarshal([]byte(tt.check), &c); err != nil {
			t.Fatalf("%s: %v", tt.check, err)
		}
		if err := c.compile(); err != nil {
			t.Fatalf("%s: %v", tt.check, err)
		}
		if got := c.Holds(nil, state.Value()); got != tt.want {
			t.Errorf("%s: Holds = %v, want %v", tt.check, got, tt.want)
		}
	}
}

func TestCheckCompileErrors(t *testing.T) {
	for _, s := range []string{
		`{"path": "/a"}`,
		`{"path": "/a", "matches": "("}`,
		`{"path": "/a", "length": {"min": 3, "max": 1}}`,
	} {
		var c Check
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatal(err)
		}
		if err := c.compile(); err == nil {
			t.Errorf("%s: compiled, want an error", s)
		}
	}
}
