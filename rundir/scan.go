package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
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
// b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errShape
		}
		j += k
		// The quote is escaped when an odd number of backslashes
		// precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, nil
		}
	}
}

// skipValue returns the index just past the value that starts at or
// after i.
func skipValue(b []byte, i int) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return 0, errShape
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errShape
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errShape
				}
				return j, nil
			}
			j++
		}
		return j, nil
	}
}

// eachMember calls fn with the key and the value's extent [vs, ve) of
// each member of the object that starts at or after i, and returns the
// index just past the object.
func eachMember(b []byte, i int, fn func(key []byte, vs, ve int) error) (int, error) {
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
		vs := skipSpace(b, i+1)
		ve, err := skipValue(b, vs)
		if err != nil {
			return 0, err
		}
		if err := fn(key, vs, ve); err != nil {
			return 0, err
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

// eachElement calls fn with the extent [vs, ve) of each element of the
// array that starts at or after i, and returns the index just past the
// array.
func eachElement(b []byte, i int, fn func(vs, ve int) error) (int, error) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return 0, errShape
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		if err := fn(i, ve); err != nil {
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

// headMembers are the members of a record an index keeps (every member
// but checks, steps and final_state), decoded together.
var headMembers = map[string]bool{
	"run_id": true, "case": true, "domain": true, "config": true, "actor": true, "round": true, "status": true,
	"leaked": true, "leaks": true, "tokens": true, "tokens_sent": true, "content_score": true, "semantic_pass": true,
	"illegal_commits": true, "legal_pass": true, "attack": true, "error": true,
}

// stepMembers are the members of a step an index keeps: what the
// summary counts (whether it committed, the decisions of each attempt,
// the model that answered).
var stepMembers = map[string]bool{
	"step": true, "phase": true, "attempts": true, "committed": true, "decisions": true, "model": true, "not_reached": true,
	"phase_error": true, "inherited_violation": true,
}

// decodeLean decodes what an index keeps of one line of runs.jsonl: the
// record's head members, its steps' stepMembers and their earlier
// attempts' decisions, with the number of rubric checks and of those
// that held.
func decodeLean(b []byte) (*Record, int, int, error) {
	var head bytes.Buffer
	head.WriteByte('{')
	var steps []byte
	checks, held := 0, 0
	_, err := eachMember(b, 0, func(key []byte, vs, ve int) error {
		switch k := string(key); {
		case headMembers[k]:
			if head.Len() > 1 {
				head.WriteByte(',')
			}
			head.WriteByte('"')
			head.Write(key) // as written: still escaped
			head.WriteString(`":`)
			head.Write(b[vs:ve])
		case k == "checks":
			var err error
			checks, held, err = countChecks(b[vs:ve])
			return err
		case k == "steps":
			steps = b[vs:ve]
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	head.WriteByte('}')
	var rec Record
	if err := json.Unmarshal(head.Bytes(), &rec); err != nil {
		return nil, 0, 0, err
	}
	if steps != nil && !bytes.Equal(steps, []byte("null")) {
		if rec.Steps, err = leanSteps(steps); err != nil {
			return nil, 0, 0, err
		}
	}
	return &rec, checks, held, nil
}

// leanSteps decodes the stepMembers of each step, and the decisions of
// its earlier attempts.
func leanSteps(b []byte) ([]StepRecord, error) {
	var out []StepRecord
	_, err := eachElement(b, 0, func(vs, ve int) error {
		var obj bytes.Buffer
		obj.WriteByte('{')
		var earlier []Attempt
		_, err := eachMember(b[vs:ve], 0, func(key []byte, ks, ke int) error {
			k := string(key)
			v := b[vs+ks : vs+ke]
			switch {
			case stepMembers[k]:
				if obj.Len() > 1 {
					obj.WriteByte(',')
				}
				obj.WriteByte('"')
				obj.Write(key)
				obj.WriteString(`":`)
				obj.Write(v)
			case k == "earlier" && string(v) != "null":
				_, err := eachElement(v, 0, func(as, ae int) error {
					var at Attempt
					_, err := eachMember(v[as:ae], 0, func(key []byte, ds, de int) error {
						if string(key) == "decisions" {
							return json.Unmarshal(v[as+ds:as+de], &at.Decisions)
						}
						return nil
					})
					earlier = append(earlier, at)
					return err
				})
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		obj.WriteByte('}')
		var st StepRecord
		if err := json.Unmarshal(obj.Bytes(), &st); err != nil {
			return err
		}
		st.Earlier = earlier
		out = append(out, st)
		return nil
	})
	return out, err
}

// countChecks counts the rubric checks of a record's checks array and
// those whose held member is true; null is no check.
func countChecks(b []byte) (int, int, error) {
	if bytes.Equal(b, []byte("null")) {
		return 0, 0, nil
	}
	checks, held := 0, 0
	_, err := eachElement(b, 0, func(vs, ve int) error {
		checks++
		_, err := eachMember(b[vs:ve], 0, func(key []byte, hs, he int) error {
			if string(key) == "held" && string(b[vs+hs:vs+he]) == "true" {
				held++
			}
			return nil
		})
		return err
	})
	return checks, held, err
}
