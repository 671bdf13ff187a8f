package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxRecordContainers bounds the JSON objects and arrays of one line of
// runs.jsonl, its final_state aside (100,000). Every reader refuses a line
// with more with a *LineError (ErrTooManyContainers) before decoding it:
// each object of a record's lists becomes a Go value of up to a few KB
// (a step record, a check, a leak), so a short line of empty objects
// ("steps": [{}, {}, ...]) would otherwise cost hundreds of times its
// length (issue 23: a 3 MB line took 1.7 GB). A run writes far fewer: the
// default run's records hold at most 124, and one with 100 attempts of a
// tools-protocol step a few thousand.
const MaxRecordContainers = 100_000

// ErrTooManyContainers is the cause of a *LineError for a line of
// runs.jsonl with more than MaxRecordContainers objects and arrays.
var ErrTooManyContainers = fmt.Errorf("the record holds more than %d JSON objects and arrays (its final_state aside), more than any run writes", MaxRecordContainers)

// checkContainers counts the objects and arrays of a line of runs.jsonl,
// outside the value of its top-level member "final_state" (a state, which
// is kept as text), and returns ErrTooManyContainers past
// MaxRecordContainers. It reads the line once, strings skipped as the
// index's scanner skips them (scan.go); a line that is not JSON is left
// to the decoder to refuse.
func checkContainers(b []byte) error {
	n, depth := 0, 0
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			end, err := skipString(b, i)
			if err != nil {
				return nil
			}
			if depth == 1 && bytes.Equal(b[i+1:end-1], finalStateName) {
				if j := skipSpace(b, end); j < len(b) && b[j] == ':' {
					if k, err := skipValue(b, j+1); err == nil {
						end = k
					}
				}
			}
			i = end
			continue
		case '{', '[':
			depth++
			if n++; n > MaxRecordContainers {
				return ErrTooManyContainers
			}
		case '}', ']':
			depth--
		}
		i++
	}
	return nil
}

var finalStateName = []byte("final_state")

// decodeRecord decodes one line of runs.jsonl into rec, refusing first a
// line of more than MaxRecordContainers objects and arrays (its memory
// would be many times its length).
func decodeRecord(b []byte, rec *Record) error {
	if err := checkContainers(b); err != nil {
		return err
	}
	return json.Unmarshal(b, rec)
}
