// Package overlay holds the values of committed states that share every
// untouched subtree with the state before them (PatchBench design §4: a
// step costs what its footprint costs): a container on a changed path is
// a Node over a plain container that is never modified, and CEL reads a
// Node as the container it stands for. Values are the runtime's decoded
// JSON values (nil, bool, string, json.Number, []any, map[string]any) or
// Nodes; paths are JSON Pointer reference tokens (RFC 6901), unescaped.
package overlay

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/patchbench/patchbench/runtime/internal/index"
)

// Node is a container of an overlay. A committed state shares every
// untouched subtree with the state before it. Its value is kept, until
// someone asks for it whole, as an overlay: the containers on the paths
// from the root to the changed subtrees are Nodes, each a plain container
// (the base, never modified) with a few children replaced. Everything else is the base's own values. Building
// the overlay costs the length of the changed paths, not the width of the
// containers on them; the plain value (Document.Value) is built from it
// on demand, once.
//
// The base of a Node is always a plain container: an overlay over an
// overlay is flattened into one node whose kids hold both layers' changes
// (Set), so lookups never walk a chain of states.
type Node struct {
	base  any            // map[string]any or []any, never modified
	kids  map[string]any // object members replaced (plain values or *Node)
	ikids map[int]any    // array elements replaced

	once sync.Once
	mat  any // the plain container, built on demand
}

// Child returns the child of a container at tok: a member of an object,
// an element of an array (tok a valid index, index.Parse, within range),
// or the corresponding child of an overlay. ok is false when there is
// none or v is not a container.
func Child(v any, tok string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		c, ok := x[tok]
		return c, ok
	case []any:
		i, err := index.Parse(tok)
		if err != nil || i >= len(x) {
			return nil, false
		}
		return x[i], true
	case *Node:
		if m, isMap := x.base.(map[string]any); isMap {
			if c, ok := x.kids[tok]; ok {
				return c, true
			}
			c, ok := m[tok]
			return c, ok
		}
		a := x.base.([]any)
		i, err := index.Parse(tok)
		if err != nil || i >= len(a) {
			return nil, false
		}
		if c, ok := x.ikids[i]; ok {
			return c, true
		}
		return a[i], true
	}
	return nil, false
}

// Lookup resolves p in a value that may hold overlays (RFC 6901 §4,
// array tokens as index.Parse).
func Lookup(v any, p []string) (any, bool) {
	for _, tok := range p {
		var ok bool
		if v, ok = Child(v, tok); !ok {
			return nil, false
		}
	}
	return v, true
}

// Plain returns the plain value of v: v itself unless it is an
// overlay, whose plain container is built once and shared.
func Plain(v any) any {
	if n, ok := v.(*Node); ok {
		return n.plain()
	}
	return v
}

func (n *Node) plain() any {
	n.once.Do(func() {
		switch b := n.base.(type) {
		case map[string]any:
			m := maps.Clone(b)
			for k, c := range n.kids {
				m[k] = Plain(c)
			}
			n.mat = m
		case []any:
			a := slices.Clone(b)
			for i, c := range n.ikids {
				a[i] = Plain(c)
			}
			n.mat = a
		}
	})
	return n.mat
}

// Set returns root with the value at p (which exists in root) replaced
// by val: the containers on the path become overlays that share the rest
// with root. root is not modified.
func Set(root any, p []string, val any) any {
	if len(p) == 0 {
		return val
	}
	tok := p[0]
	child, ok := Child(root, tok)
	if !ok {
		panic(fmt.Sprintf("overlay: the path %q does not exist", p))
	}
	n := &Node{}
	switch x := root.(type) {
	case *Node:
		n.base, n.kids, n.ikids = x.base, maps.Clone(x.kids), maps.Clone(x.ikids)
	default:
		n.base = x
	}
	nc := Set(child, p[1:], val)
	if _, isMap := n.base.(map[string]any); isMap {
		if n.kids == nil {
			n.kids = map[string]any{}
		}
		n.kids[tok] = nc
	} else {
		i, _ := index.Parse(tok)
		if n.ikids == nil {
			n.ikids = map[int]any{}
		}
		n.ikids[i] = nc
	}
	return n
}

// Size counts the overlay nodes of v, a measure of how far a state has
// drifted from the plain value its overlay is built on.
func Size(v any) int {
	n, ok := v.(*Node)
	if !ok {
		return 0
	}
	s := 1
	for _, c := range n.kids {
		s += Size(c)
	}
	for _, c := range n.ikids {
		s += Size(c)
	}
	return s
}

// CEL values of overlays. They present an Node to invariants exactly as
// the adapter presents its plain container (types.NewStringInterfaceMap
// and types.NewDynamicList over map[string]any and []any): the same
// sizes, keys, elements, equality and errors, read lazily, so an
// invariant over a large state reads only what it looks at. Conversions
// to native values use the plain container, built on demand.

type ovMapVal struct {
	a    types.Adapter
	n    *Node
	m    map[string]any // n.base
	base traits.Mapper  // the base map as CEL sees it
}

type ovListVal struct {
	a types.Adapter
	n *Node
	l []any // n.base
}

// CELValue is the CEL value of n for the adapter a (which converts its
// children): it reads as the CEL map or list of n's plain container.
func CELValue(a types.Adapter, n *Node) ref.Val {
	if m, ok := n.base.(map[string]any); ok {
		return &ovMapVal{a: a, n: n, m: m, base: types.NewStringInterfaceMap(a, m)}
	}
	return &ovListVal{a: a, n: n, l: n.base.([]any)}
}

func (m *ovMapVal) plain() traits.Mapper {
	return types.NewStringInterfaceMap(m.a, m.n.plain().(map[string]any))
}

// Find implements traits.Mapper: a replaced member, else the base's.
func (m *ovMapVal) Find(key ref.Val) (ref.Val, bool) {
	if s, ok := key.(types.String); ok {
		if c, ok := m.n.kids[string(s)]; ok {
			return m.a.NativeToValue(c), true
		}
	}
	return m.base.Find(key)
}

func (m *ovMapVal) Get(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}

func (m *ovMapVal) Contains(key ref.Val) ref.Val {
	_, found := m.Find(key)
	return types.Bool(found)
}

// Iterator ranges over the member names, which an overlay never changes.
func (m *ovMapVal) Iterator() traits.Iterator { return m.base.Iterator() }

func (m *ovMapVal) Size() ref.Val { return types.Int(len(m.m)) }

func (m *ovMapVal) IsZeroValue() bool { return len(m.m) == 0 }

func (m *ovMapVal) Equal(other ref.Val) ref.Val {
	otherMap, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if m.Size() != otherMap.Size() {
		return types.False
	}
	for k := range m.m {
		key := types.String(k)
		thisVal, _ := m.Find(key)
		otherVal, found := otherMap.Find(key)
		if !found {
			return types.False
		}
		if types.Equal(thisVal, otherVal) == types.False {
			return types.False
		}
	}
	return types.True
}

func (m *ovMapVal) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return m.plain().ConvertToNative(typeDesc)
}

func (m *ovMapVal) ConvertToType(typeVal ref.Type) ref.Val {
	switch typeVal {
	case types.MapType:
		return m
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", types.MapType, typeVal)
}

func (m *ovMapVal) Type() ref.Type { return types.MapType }
func (m *ovMapVal) Value() any     { return m.n.plain() }
func (m *ovMapVal) String() string { return fmt.Sprint(m.plain()) }

func (l *ovListVal) plain() traits.Lister {
	return types.NewDynamicList(l.a, l.n.plain().([]any))
}

func (l *ovListVal) elem(i int) ref.Val {
	if c, ok := l.n.ikids[i]; ok {
		return l.a.NativeToValue(c)
	}
	return l.a.NativeToValue(l.l[i])
}

func (l *ovListVal) Get(index ref.Val) ref.Val {
	ind, err := types.GetOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if ind < 0 || ind >= len(l.l) {
		return types.NewErr("index '%d' out of range in list size '%d'", ind, len(l.l))
	}
	return l.elem(ind)
}

func (l *ovListVal) Size() ref.Val     { return types.Int(len(l.l)) }
func (l *ovListVal) IsZeroValue() bool { return len(l.l) == 0 }

func (l *ovListVal) Contains(e ref.Val) ref.Val {
	for i := range l.l {
		if b, ok := e.Equal(l.elem(i)).(types.Bool); ok && b == types.True {
			return types.True
		}
	}
	return types.False
}

func (l *ovListVal) Equal(other ref.Val) ref.Val {
	otherList, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if l.Size() != otherList.Size() {
		return types.False
	}
	for i := range l.l {
		if types.Equal(l.elem(i), otherList.Get(types.Int(i))) == types.False {
			return types.False
		}
	}
	return types.True
}

func (l *ovListVal) Add(other ref.Val) ref.Val {
	if _, ok := other.(traits.Lister); !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return l.plain().Add(other)
}

func (l *ovListVal) Iterator() traits.Iterator { return &ovListIterator{l: l} }

func (l *ovListVal) ConvertToNative(typeDesc reflect.Type) (any, error) {
	return l.plain().ConvertToNative(typeDesc)
}

func (l *ovListVal) ConvertToType(typeVal ref.Type) ref.Val {
	switch typeVal {
	case types.ListType:
		return l
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", types.ListType, typeVal)
}

func (l *ovListVal) Type() ref.Type { return types.ListType }
func (l *ovListVal) Value() any     { return l.n.plain() }
func (l *ovListVal) String() string { return fmt.Sprint(l.plain()) }

type ovListIterator struct {
	l      *ovListVal
	cursor int
}

func (it *ovListIterator) HasNext() ref.Val { return types.Bool(it.cursor < len(it.l.l)) }

func (it *ovListIterator) Next() ref.Val {
	if it.cursor < len(it.l.l) {
		i := it.cursor
		it.cursor++
		return it.l.Get(types.Int(i))
	}
	return nil
}

func (it *ovListIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}
func (it *ovListIterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (it *ovListIterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (it *ovListIterator) Type() ref.Type                 { return types.IteratorType }
func (it *ovListIterator) Value() any                     { return nil }

// IsObject reports whether v is an object: a map[string]any or a Node over
// one.
func IsObject(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return true
	case *Node:
		_, ok := x.base.(map[string]any)
		return ok
	}
	return false
}

// IsArray reports whether v is an array: a []any or a Node over one.
func IsArray(v any) bool {
	switch x := v.(type) {
	case []any:
		return true
	case *Node:
		_, ok := x.base.([]any)
		return ok
	}
	return false
}

// Base returns the plain container a Node is built over; it must not be
// modified.
func (n *Node) Base() any { return n.base }
