package report

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// unmeasured are the members of a Row that are null in summary.json when
// no run of the row has an outcome (every run ended in an error or is
// pending): its rates, means and their intervals, of which nothing was
// measured. A 0 there would read as a measured rate of 0.
var unmeasured = map[string]bool{
	"leak_rate": true, "leak_ci": true, "leaked_per_round": true, "tokens_mean": true, "tokens_ci": true,
	"commit_rate": true, "content_score": true, "semantic_pass": true, "semantic_pass_ci": true,
	"illegal_commit_rate": true, "illegal_commit_ci": true, "legal_pass": true, "legal_pass_ci": true,
}

// MarshalJSON writes the row as summary.json holds it: when Measured is 0
// its rates, means and intervals are null rather than 0; the counts stay.
// The members keep their order. Decoding it back gives 0 for a null.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row // without this method
	b, err := json.Marshal(plain(r))
	if err != nil || r.Measured() > 0 {
		return b, err
	}
	return nullMembers(b, unmeasured)
}

// nullMembers rewrites the JSON object obj with the members named in
// names set to null, keeping the order of its members.
func nullMembers(obj []byte, names map[string]bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("report: not a JSON object: %s", obj)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i := 0; dec.More(); i++ {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(t)
		out.Write(name)
		out.WriteByte(':')
		if names[t.(string)] {
			v = json.RawMessage("null")
		}
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
