package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxRecordContainers bounds the JSON objects and arrays of one line of
// runs.jsonl outside its final_state (100,000), and those of its
// final_state apart. Every reader refuses a line
// with more with a *LineError (ErrTooManyContainers) before decoding it:
// each object of a record's lists becomes a Go value of up to a few KB
// (a step record, a check, a leak), so a short line of empty objects
// ("steps": [{}, {}, ...]) would otherwise cost hundreds of times its
// length (a 3 MB line took 1.7 GB). A run writes far fewer: the
// default run's records hold at most 124, and one with 100 attempts of a
// tools-protocol step a few thousand.
const MaxRecordContainers = 100_000

// ErrTooManyContainers is the cause of a *LineError for a line of
// runs.jsonl with more than MaxRecordContainers objects and arrays.
var ErrTooManyContainers = fmt.Errorf("the record holds more than %d JSON objects and arrays (its final_state aside), more than any run writes", MaxRecordContainers)

// MaxRecordSteps bounds the steps of one record (1,000; a case has a
// few, three at most in the embedded suite): each step costs a few KB
// decoded and a section of every page that shows the run, so a record of
// thousands of empty steps, under MaxRecordContainers, still cost
// hundreds of MB in report, show and browse.
const MaxRecordSteps = 1000

// MaxRecordDepth bounds how deep one line of runs.jsonl nests, its final
// state included (1,024: a state nests at most DefaultMaxDepth, 512,
// levels, and a record wraps it in a few). Deeper, encoding/json spent
// hundreds of MB before refusing it at 10,000 levels.
const MaxRecordDepth = 1024

// MaxRecordValues bounds the strings, numbers, booleans and nulls of one
// line of runs.jsonl outside its final_state (4,000,000; its final state
// is kept as text). Each becomes a Go value of 16 to 32 bytes, so a line
// of 25 million zeros in a patch's value, or of 16 million empty strings
// in a list, took 1.3 to 2.1 GB. A run writes
// far fewer: a record keeps the last proposal of each step, and with the
// default --max-answer-bytes (1 MiB) an answer holds at most about
// 500,000 values.
const MaxRecordValues = 4_000_000

// MaxRecordPointerTokens bounds the reference tokens of the JSON Pointers
// of one line's recorded patches (the "path" and "from" of the operations
// under steps: 1,000,000). Each token becomes a Go string of 16 bytes, so
// one path of 50 million slashes took 1.8 GB; a run records pointers of
// at most MaxRecordedPointerBytes, so at most 1,000 operations of 1,024
// tokens a step.
const MaxRecordPointerTokens = 1_000_000

// ErrTooManyValues and ErrTooManyPointerTokens are the causes of a
// *LineError for a line past MaxRecordValues or MaxRecordPointerTokens.
var (
	ErrTooManyValues        = fmt.Errorf("the record holds more than %d JSON strings, numbers, booleans and nulls (its final_state aside), more than any run writes", MaxRecordValues)
	ErrTooManyPointerTokens = fmt.Errorf("the record's patches hold JSON Pointers of more than %d reference tokens in all, more than any run writes", MaxRecordPointerTokens)
)

// ErrTooManySteps and ErrTooDeep are the causes of a *LineError for a
// record past MaxRecordSteps or MaxRecordDepth.
var (
	ErrTooManySteps = fmt.Errorf("the record has more than %d steps, more than any case has", MaxRecordSteps)
	ErrTooDeep      = fmt.Errorf("the record nests deeper than %d levels, deeper than any run writes", MaxRecordDepth)
)

// checkContainers reads a line of runs.jsonl once, before it is decoded,
// and refuses it when it holds more than MaxRecordContainers objects and
// arrays outside its top-level member "final_state", or as many inside
// it (ErrTooManyContainers), more than MaxRecordValues other values
// outside it (ErrTooManyValues), more than MaxRecordSteps steps
// (ErrTooManySteps), patches whose pointers hold more than
// MaxRecordPointerTokens tokens (ErrTooManyPointerTokens), or nests
// deeper than MaxRecordDepth (ErrTooDeep). Strings are skipped as the
// index's scanner skips them (scan.go); a line that is not JSON is left
// to the decoder to refuse.
func checkContainers(b []byte) error {
	outside, inside, values, tokens, steps, depth := 0, 0, 0, 0, 0, 0
	final, stepsAt := 0, 0 // the depth inside final_state's value, steps' array; 0: not in it
	pointer := false       // the member just named is a "path" or "from" under steps
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '"':
			end, err := skipString(b, i)
			if err != nil {
				return nil
			}
			j := skipSpace(b, end)
			if j < len(b) && b[j] == ':' { // a member name
				name := b[i+1 : end-1]
				if depth == 1 {
					switch {
					case bytes.Equal(name, finalStateName):
						final = -1 // the next container opens it
					case bytes.Equal(name, stepsName):
						stepsAt = -1
					}
				}
				pointer = stepsAt == 2 && depth >= 3 && (bytes.Equal(name, pathName) || bytes.Equal(name, fromName))
				i = j + 1
				continue
			}
			if final <= 0 {
				if values++; values > MaxRecordValues {
					return ErrTooManyValues
				}
			}
			if pointer {
				if tokens += bytes.Count(b[i:end], slash); tokens > MaxRecordPointerTokens {
					return ErrTooManyPointerTokens
				}
			}
			pointer = false
			i = end
			continue
		case '{', '[':
			pointer = false
			depth++
			if depth > MaxRecordDepth {
				return ErrTooDeep
			}
			if final == -1 && depth == 2 {
				final = 2
			}
			if stepsAt == -1 && depth == 2 && c == '[' {
				stepsAt = 2
			} else if stepsAt == 2 && depth == 3 {
				if steps++; steps > MaxRecordSteps {
					return ErrTooManySteps
				}
			}
			if final > 0 {
				if inside++; inside > MaxRecordContainers {
					return ErrTooManyContainers
				}
			} else if outside++; outside > MaxRecordContainers {
				return ErrTooManyContainers
			}
		case '}', ']':
			if depth == 2 {
				final, stepsAt = 0, 0
			}
			depth--
		case ',':
			if depth == 1 {
				final, stepsAt = 0, 0 // a scalar value ended
			}
		case ' ', '\t', '\n', '\r', ':':
		default: // a number, true, false or null
			pointer = false
			if final <= 0 {
				if values++; values > MaxRecordValues {
					return ErrTooManyValues
				}
			}
			for i < len(b) && !bytes.ContainsRune(valueEnds, rune(b[i])) {
				i++
			}
			continue
		}
		i++
	}
	return nil
}

var (
	pathName  = []byte("path")
	fromName  = []byte("from")
	slash     = []byte("/")
	valueEnds = []byte(",]} \t\n\r")
)

var stepsName = []byte("steps")

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
