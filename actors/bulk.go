package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bulk answers with the reference proposal after the shortcut a hurried
// agent takes on a large state: an operation that adds or replaces an
// object whose members all equal members of a record it sees (a row built
// from four fields of a contact) copies that whole record instead (op
// copy, from the record's pointer); one that writes an object or an array
// of such objects writes it empty, then copies each record into it. The
// copy is made on the full state, so it carries along the members the
// view hides: what the patch-source gate exists to stop. Every other
// operation, and the note, are the reference's.
type Bulk struct{}

// Name implements Actor.
func (Bulk) Name() string { return "bulk" }

// SpeaksTools implements ToolSpeaker.
func (Bulk) SpeaksTools() bool { return true }

func init() {
	Register(Kind{Spec: "bulk", Usage: "bulk", New: func(string, Params) (Actor, error) { return Bulk{}, nil }})
}

// Propose implements Actor. In the tools protocol it proposes at once,
// reading nothing: the shortcut needs no look at the records.
func (Bulk) Propose(_ context.Context, req Request) (Response, error) {
	var ref struct {
		Patch []map[string]any `json:"patch"`
		Note  string           `json:"note"`
	}
	d := json.NewDecoder(bytes.NewReader(req.Reference))
	d.UseNumber()
	if err := d.Decode(&ref); err != nil {
		return Response{}, fmt.Errorf("step %s: reference: %w", req.StepID, err)
	}
	ix := newRecordIndex(req.View, ref.Patch)
	var patch []map[string]any
	for _, op := range ref.Patch {
		patch = append(patch, ix.shortcut(op)...)
		ix.appended(op)
	}
	out, err := json.Marshal(map[string]any{"patch": patch, "note": ref.Note})
	if err != nil {
		return Response{}, err
	}
	if req.Tools != nil {
		return toolTurn(req, nil, out)
	}
	return Response{Raw: string(out)}, nil
}

// recordIndex finds the records of a view that an object was built from:
// the objects of the view, by the value of one member.
type recordIndex struct {
	byKey map[string][]record // by key(member, value) of a wanted first member
	view  any
	// appends counts the elements the patch so far appended to each
	// array (by its pointer), so that a copy into an appended element
	// names its index.
	appends map[string]int
}

// record is an object of the view and its JSON Pointer.
type record struct {
	ptr string
	obj map[string]any
}

// newRecordIndex indexes the objects of view that may match a value the
// patch writes: those whose member holds the value a written object's
// first member (in name order) holds.
func newRecordIndex(view any, patch []map[string]any) *recordIndex {
	want, names := map[string]bool{}, map[string]bool{}
	var note func(v any)
	note = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if k := firstKey(x); k != "" {
				want[key(k, x[k])], names[k] = true, true
			}
			for _, c := range x {
				note(c)
			}
		case []any:
			for _, c := range x {
				note(c)
			}
		}
	}
	for _, op := range patch {
		note(op["value"])
	}
	ix := &recordIndex{byKey: map[string][]record{}, view: view, appends: map[string]int{}}
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				// canon writes a container whole: only the members
				// whose name a written object starts with are keyed.
				if !names[k] {
					continue
				}
				if kk := key(k, c); want[kk] {
					ix.byKey[kk] = append(ix.byKey[kk], record{ptr: ptr, obj: x})
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(ptr+"/"+escapeToken(k), x[k])
			}
		case []any:
			for i, c := range x {
				walk(ptr+"/"+strconv.Itoa(i), c)
			}
		}
	}
	walk("", view)
	return ix
}

// source is the record that v was built from: a record other than v's
// own place, with at least two members, every member of v equal to the
// record's member of that name, and more members than v.
func (ix *recordIndex) source(v any, path string) (string, bool) {
	obj, ok := v.(map[string]any)
	k := firstKey(obj)
	if !ok || len(obj) < 2 || k == "" {
		return "", false
	}
	for _, r := range ix.byKey[key(k, obj[k])] {
		if len(r.obj) <= len(obj) || r.ptr == path || strings.HasPrefix(r.ptr, path+"/") {
			continue
		}
		all := true
		for m, x := range obj {
			if y, ok := r.obj[m]; !ok || canon(x) != canon(y) {
				all = false
				break
			}
		}
		if all {
			return r.ptr, true
		}
	}
	return "", false
}

// appended notes an operation that appends to an array (an add to
// ".../-").
func (ix *recordIndex) appended(op map[string]any) {
	name, _ := op["op"].(string)
	path, _ := op["path"].(string)
	if name == "add" && strings.HasSuffix(path, "/-") {
		ix.appends[strings.TrimSuffix(path, "/-")]++
	}
}

// target is where a copy into the value an operation writes at path
// goes: path itself, or, for an append (".../-"), the index the
// appended element takes (the array's length in the view plus the
// patch's earlier appends to it).
func (ix *recordIndex) target(path string) string {
	arr, ok := strings.CutSuffix(path, "/-")
	if !ok {
		return path
	}
	n := ix.appends[arr]
	if a, ok := viewAt(ix.view, arr).([]any); ok {
		n += len(a)
	}
	return arr + "/" + strconv.Itoa(n)
}

// viewAt is the value at a JSON Pointer in v, or nil.
func viewAt(v any, ptr string) any {
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// shortcut is op as Bulk sends it: a copy of the record its value was
// built from, or its container written without the records and each
// record copied in (into an appended element by its index), or op
// itself.
func (ix *recordIndex) shortcut(op map[string]any) []map[string]any {
	name, _ := op["op"].(string)
	path, _ := op["path"].(string)
	if name != "add" && name != "replace" {
		return []map[string]any{op}
	}
	v := op["value"]
	if from, ok := ix.source(v, path); ok {
		return []map[string]any{{"op": "copy", "from": from, "path": path}}
	}
	var copies []map[string]any
	switch x := v.(type) {
	case map[string]any:
		rest := map[string]any{}
		at := ix.target(path)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if from, ok := ix.source(x[k], at+"/"+escapeToken(k)); ok {
				copies = append(copies, map[string]any{"op": "copy", "from": from, "path": at + "/" + escapeToken(k)})
			} else {
				rest[k] = x[k]
			}
		}
		v = rest
	case []any:
		var rest []any
		for _, c := range x {
			if from, ok := ix.source(c, path); ok {
				copies = append(copies, map[string]any{"op": "copy", "from": from, "path": path + "/-"})
			} else {
				rest = append(rest, c)
			}
		}
		if len(rest) > 0 && len(copies) > 0 {
			return []map[string]any{op} // the items' order would change
		}
		v = []any{}
	}
	if len(copies) == 0 {
		return []map[string]any{op}
	}
	return append([]map[string]any{{"op": name, "path": path, "value": v}}, copies...)
}

// key is the index key of a member and its value.
func key(member string, v any) string { return member + "\x00" + canon(v) }

// canon is a JSON value as text, numbers by value and members in name
// order, so that 42.5 and 42.50 are one value.
func canon(v any) string {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any:
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k) + ":" + canon(x[k]))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		parts := make([]string, len(x))
		for i, c := range x {
			parts[i] = canon(c)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// firstKey is m's first member name in order ("" for an empty object).
func firstKey(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	return slices.Min(slices.Collect(maps.Keys(m)))
}

// escapeToken is a member name as a JSON Pointer token (RFC 6901 §3).
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
