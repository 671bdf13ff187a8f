package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/patchbench/patchbench/internal/jsonskip"
	"github.com/patchbench/patchbench/runtime"
)

// A small structural scanner of JSON text: it finds where each value
// starts and ends without decoding it, skipping strings with
// bytes.IndexByte, so that an index can pick the few members it needs
// out of a large record (a run's prompts and states are most of its
// bytes) and decode only those. It assumes valid JSON and reports a
// shape it does not expect as an error; callers then decode the line
// whole.

var errShape = errors.New("unexpected JSON shape")

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at
// b[i] == '"' (jsonskip.String), or errShape when it does not end.
func skipString(b []byte, i int) (int, error) {
	if j := jsonskip.String(b, i); j >= 0 {
		return j, nil
	}
	return 0, errShape
}

// skipValue returns the index just past the value that starts at or
// after i (jsonskip.Value), or errShape when there is none.
func skipValue(b []byte, i int) (int, error) {
	if j := jsonskip.Value(b, skipSpace(b, i)); j >= 0 {
		return j, nil
	}
	return 0, errShape
}

// leanDecoder decodes what an index keeps of lines of runs.jsonl. It keeps
// one copy of each name (case, configuration, actor, status, step, phase,
// model), which thousands of runs share.
type leanDecoder struct {
	names map[string]string
}

// name decodes a JSON string that names something, as the copy kept.
func (d *leanDecoder) name(v []byte) (string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return jsonString(v)
	}
	k := v[1 : len(v)-1]
	if s, ok := d.names[string(k)]; ok {
		return s, nil
	}
	if d.names == nil {
		d.names = map[string]string{}
	}
	s := string(k)
	d.names[s] = s
	return s, nil
}

// decode decodes what an index keeps of one line of runs.jsonl: every
// member of the record but its checks (counted: the number of rubric
// checks and of those that held), its steps (headStep: what a summary
// counts) and its final state. The steps are scanned once, as they are
// decoded; scalars are read from their text, and only the members that
// hold objects are given to encoding/json. When whole is set (the line
// ended with its newline, so it was written to the end), the scan stops at
// final_state, the last member a record is written with and the one an
// index does not keep.
func (d *leanDecoder) decode(b []byte, whole bool) (*Record, int, int, error) {
	var rec Record
	checks, held := 0, 0
	_, err := eachMemberEnd(b, 0, func(key []byte, vs int) (int, error) {
		switch k := string(key); k {
		case "steps":
			if bytes.HasPrefix(b[vs:], []byte("null")) {
				return vs + 4, nil
			}
			var err error
			rec.Steps, vs, err = d.steps(b, vs)
			return vs, err
		case "final_state":
			if whole {
				return -1, nil
			}
			return skipValue(b, vs)
		}
		ve, err := skipValue(b, vs)
		if err != nil {
			return 0, err
		}
		v := b[vs:ve]
		switch k := string(key); k {
		case "checks":
			checks, held, err = countChecks(v)
		case "run_id":
			rec.RunID, err = jsonString(v)
		case "case":
			rec.Case, err = d.name(v)
		case "domain":
			rec.Domain, err = d.name(v)
		case "config":
			rec.Config, err = d.name(v)
		case "actor":
			rec.Actor, err = d.name(v)
		case "status":
			rec.Status, err = d.name(v)
		case "round":
			rec.Round, err = jsonInt(v)
		case "scale":
			rec.Scale, err = d.name(v)
		case "attack_name":
			rec.AttackName, err = d.name(v)
		case "tokens_sent":
			rec.TokensSent, err = jsonInt(v)
		case "content_score":
			rec.ContentScore, err = strconv.ParseFloat(string(v), 64)
		case "leaked":
			rec.Leaked, err = jsonBool(v)
		case "semantic_pass":
			rec.SemanticPass, err = jsonBool(v)
		case "legal_pass":
			rec.LegalPass, err = jsonBool(v)
		case "leaks":
			err = jsonValue(v, &rec.Leaks)
		case "tokens":
			err = jsonValue(v, &rec.Tokens)
		case "illegal_commits":
			err = jsonValue(v, &rec.IllegalCommits)
		case "attack":
			err = jsonValue(v, &rec.Attack)
		case "error":
			err = jsonValue(v, &rec.Error)
		}
		return ve, err
	})
	if err != nil {
		return nil, 0, 0, err
	}
	return &rec, checks, held, nil
}

// jsonString decodes a JSON string, without encoding/json when it has no
// escape.
func jsonString(v []byte) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

// jsonInt decodes a JSON integer as json.Marshal writes one.
func jsonInt(v []byte) (int, error) {
	n, err := strconv.Atoi(string(v))
	if err != nil {
		err = json.Unmarshal(v, &n)
	}
	return n, err
}

func jsonBool(v []byte) (bool, error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errShape
}

// jsonValue decodes a JSON value into dst, which an empty array or null
// leaves as it is.
func jsonValue(v []byte, dst any) error {
	if s := string(v); s == "[]" || s == "null" {
		return nil
	}
	return json.Unmarshal(v, dst)
}

// eachMemberEnd calls fn with the key and the start of the value of each
// member of the object that starts at or after i; fn returns the index
// just past the value, or -1 to stop there. It returns the index just past
// the object (or where it stopped).
func eachMemberEnd(b []byte, i int, fn func(key []byte, vs int) (int, error)) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, errShape
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errShape
		}
		ke, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : ke-1]
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, errShape
		}
		ve, err := fn(key, skipSpace(b, i+1))
		if err != nil {
			return 0, err
		}
		if ve < 0 {
			return i, nil
		}
		i = skipSpace(b, ve)
		if i >= len(b) {
			return 0, errShape
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, errShape
		}
	}
}

// steps decodes what an index keeps of each step of the array that
// starts at b[i] (its id, phase, attempts, whether it committed, its
// decisions when one failed, the model, whether it was reached, its phase
// error and inherited violation; and the decisions of its earlier
// attempts), scanning each byte once, and returns the index just past the
// array.
func (d *leanDecoder) steps(b []byte, i int) ([]StepRecord, int, error) {
	var out []StepRecord
	end, err := eachElementEnd(b, i, func(vs int) (int, error) {
		var st StepRecord
		ve, err := eachMemberEnd(b, vs, func(key []byte, ms int) (int, error) {
			me, err := skipValue(b, ms)
			if err != nil {
				return 0, err
			}
			v := b[ms:me]
			switch string(key) {
			case "step":
				st.Step, err = d.name(v)
			case "phase":
				st.Phase, err = d.name(v)
			case "model":
				st.Model, err = d.name(v)
			case "phase_error":
				st.PhaseError, err = jsonString(v)
			case "inherited_violation":
				st.InheritedViolation, err = jsonString(v)
			case "attempts":
				st.Attempts, err = jsonInt(v)
			case "committed":
				st.Committed, err = jsonBool(v)
			case "not_reached":
				st.NotReached, err = jsonBool(v)
			case "ended":
				st.Ended, err = d.name(v)
			case "turns":
				st.Turns, err = d.turns(v)
			case "decisions":
				// A summary counts only failures: decisions where
				// every gate passed (no false anywhere in them, whatever
				// the spacing) are not decoded.
				if bytes.Contains(v, []byte(`false`)) {
					err = json.Unmarshal(v, &st.Decisions)
				}
			case "earlier":
				// Earlier attempts are few and short: decode their
				// decisions only.
				var ats []struct {
					Decisions []runtime.GateResult `json:"decisions"`
				}
				err = json.Unmarshal(v, &ats)
				for _, a := range ats {
					st.Earlier = append(st.Earlier, Attempt{Decisions: a.Decisions})
				}
			}
			return me, err
		})
		if err != nil {
			return 0, err
		}
		out = append(out, st)
		return ve, nil
	})
	return out, end, err
}

// turns decodes what a summary counts of a step's conversation (the
// tools protocol): its turns, and of each call whether it was a read, of
// a hidden location, its error code and, for a read, the length of its
// result in bytes (ResultBytes: the recorded full length, or the
// length of the result kept); the texts, arguments and results are
// skipped.
func (d *leanDecoder) turns(v []byte) ([]Turn, error) {
	var ts []struct {
		Calls []struct {
			Read        bool            `json:"read"`
			Hidden      bool            `json:"hidden"`
			Error       string          `json:"error"`
			ResultBytes int64           `json:"result_bytes"`
			Result      json.RawMessage `json:"result"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(v, &ts); err != nil {
		return nil, err
	}
	out := make([]Turn, len(ts))
	for i, t := range ts {
		for _, c := range t.Calls {
			code := c.Error
			if n, ok := d.names[code]; ok {
				code = n
			}
			n := c.ResultBytes
			if c.Read && n == 0 && len(c.Result) > 0 {
				var text string
				if json.Unmarshal(c.Result, &text) == nil {
					n = int64(len(text))
				}
			}
			out[i].Calls = append(out[i].Calls, ToolCall{Read: c.Read, Hidden: c.Hidden, Error: code, ResultBytes: n})
		}
	}
	return out, nil
}

// eachElementEnd calls fn with the start of each element of the array
// that starts at or after i; fn returns the index just past the element.
// It returns the index just past the array.
func eachElementEnd(b []byte, i int, fn func(vs int) (int, error)) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return 0, errShape
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := fn(i)
		if err != nil {
			return 0, err
		}
		i = skipSpace(b, ve)
		if i >= len(b) {
			return 0, errShape
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, errShape
		}
	}
}

// countChecks counts the rubric checks of a record's checks array and
// those whose held member is true; null is no check. It follows any
// whitespace a line may hold, not only the writer's.
func countChecks(b []byte) (int, int, error) {
	if bytes.Equal(b, []byte("null")) {
		return 0, 0, nil
	}
	checks, held := 0, 0
	_, err := eachElementEnd(b, 0, func(vs int) (int, error) {
		checks++
		return eachMemberEnd(b, vs, func(key []byte, hs int) (int, error) {
			he, err := skipValue(b, hs)
			if err == nil && string(key) == "held" && string(b[hs:he]) == "true" {
				held++
			}
			return he, err
		})
	})
	return checks, held, err
}
