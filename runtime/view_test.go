package runtime

import "testing"

func TestView(t *testing.T) {
	state := `{
	  "patients": [
	    {"name": "A", "appt": "09:00", "dx": "CANARY-DX-1"},
	    {"name": "B", "appt": "10:30", "dx": "CANARY-DX-2"},
	    {"name": "C"}
	  ],
	  "clinic": {"name": "North", "keys": {"api": "CANARY-KEY"}},
	  "log": ["x", "y", "z"],
	  "n": 12345678901234567890123
	}`
	tests := []struct {
		name             string
		include, exclude []string
		want             string
	}{
		{"whole", []string{""}, nil, `{"clinic":{"keys":{"api":"CANARY-KEY"},"name":"North"},"log":["x","y","z"],"n":12345678901234567890123,"patients":[{"appt":"09:00","dx":"CANARY-DX-1","name":"A"},{"appt":"10:30","dx":"CANARY-DX-2","name":"B"},{"name":"C"}]}`},
		{"nothing", nil, nil, `null`},
		{"wildcard field keeps positions", []string{"/patients/*/appt"}, nil, `{"patients":[{"appt":"09:00"},{"appt":"10:30"},null]}`},
		{"exclude inside include", []string{"/patients"}, []string{"/patients/*/dx"}, `{"patients":[{"appt":"09:00","name":"A"},{"appt":"10:30","name":"B"},{"name":"C"}]}`},
		{"excluded element becomes null", []string{"/log"}, []string{"/log/1"}, `{"log":["x",null,"z"]}`},
		{"included container stays when emptied", []string{"/clinic/keys"}, []string{"/clinic/keys/api"}, `{"clinic":{"keys":{}}}`},
		{"exclude wins", []string{"/clinic"}, []string{"/clinic"}, `null`},
		{"token-wise", []string{"/clinic/name", "/lo"}, nil, `{"clinic":{"name":"North"}}`},
		{"numbers keep their text", []string{"/n"}, nil, `{"n":12345678901234567890123}`},
		{"missing path", []string{"/nope/deeper"}, nil, `null`},
	}
	doc := mustDoc(t, state)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := ViewRegion{Include: MustRegion(tt.include...), Exclude: MustRegion(tt.exclude...)}
			got := toJSON(View(doc.Value(), v))
			if got != tt.want {
				t.Fatalf("view\n got %s\nwant %s", got, tt.want)
			}
			// Deterministic: the same bytes every time.
			for i := 0; i < 5; i++ {
				if again := toJSON(View(doc.Value(), v)); again != got {
					t.Fatalf("view not deterministic: %s vs %s", again, got)
				}
			}
		})
	}
	// The view never aliases a modified copy: the document is unchanged.
	if toJSON(doc.Value()) != toJSON(mustJSON(t, state)) {
		t.Fatal("View modified the document")
	}
}

func TestViewOfScalarsAndArrays(t *testing.T) {
	all := ViewRegion{Include: MustRegion("")}
	for _, s := range []string{`"just a string"`, `42`, `null`, `true`, `[1,[2,3]]`} {
		if got := toJSON(View(mustJSON(t, s), all)); got != toJSON(mustJSON(t, s)) {
			t.Errorf("whole view of %s = %s", s, got)
		}
	}
	v := ViewRegion{Include: MustRegion("/1/0")}
	if got := toJSON(View(mustJSON(t, `[1,[2,3],4]`), v)); got != `[null,[2,null],null]` {
		t.Errorf("array root view = %s", got)
	}
	if got := View(mustJSON(t, `"s"`), v); got != nil {
		t.Errorf("scalar root with a deeper include = %v, want nil", got)
	}
}

func TestViewAddressesMatchState(t *testing.T) {
	// A pointer into the view means the same location in the state.
	doc := mustDoc(t, `{"a":[{"x":1,"s":"CANARY"},{"x":2,"s":"CANARY2"}],"b":{"c":3}}`)
	v := ViewRegion{Include: MustRegion("/a/*/x", "/b")}
	view := View(doc.Value(), v)
	for _, p := range []string{"/a/0/x", "/a/1/x", "/b/c"} {
		got, err1 := getAt(view, MustPointer(p))
		want, err2 := getAt(doc.Value(), MustPointer(p))
		if err1 != nil || err2 != nil || !equalJSON(got, want) {
			t.Errorf("%s: view %v (%v), state %v (%v)", p, got, err1, want, err2)
		}
	}
}
