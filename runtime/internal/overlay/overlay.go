// Package overlay holds the values of committed states that share every
// untouched subtree with the state before them (so that a step costs what
// its footprint costs, docs/runtime.md): a container on a changed path is
// a Node over a plain container that is never modified, and CEL reads a
// Node as the container it stands for. A parsed state's containers that
// are not built yet are Nodes over a Source (Lazy), read the same way.
// Values are the runtime's decoded JSON values (nil, bool, string,
// json.Number, []any, map[string]any) or Nodes; paths are JSON Pointer
// reference tokens (RFC 6901), unescaped.
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
// The base of a Node is always a plain container, or a Source (a
// container of a parsed state's text, not built: Lazy) whose children
// are plain values or Nodes over Sources: an overlay over an overlay is
// flattened into one node whose kids hold both layers' changes (Set), so
// lookups never walk a chain of states.
type Node struct {
	base  any            // map[string]any or []any, never modified; nil over a Source
	src   Source         // the container not built yet, when base is nil
	kids  map[string]any // object members replaced (plain values or *Node)
	ikids map[int]any    // array elements replaced

	once sync.Once
	mat  any // the plain container, built on demand
}

// Source is a container that is not built yet (a parsed state's
// container, read from its text): it gives its kind, length, member names
// and children without building itself, and its plain value (Build) on
// demand. A child is a plain value or a *Node over another Source. A
// Source is never modified, and is safe for concurrent use.
type Source interface {
	Object() bool
	// Len is the number of members or elements.
	Len() int
	// Keys are an object's member names, in text order (nil for an
	// array); the caller must not modify them.
	Keys() []string
	// Member is the object's member name, when it has one.
	Member(name string) (any, bool)
	// Elem is the array's element i, 0 <= i < Len().
	Elem(i int) any
	// Build is the plain container (map[string]any or []any), the same
	// value each time.
	Build() any
}

// Lazy returns the Node that stands for src: a container that reads as
// src's until someone asks for it whole (Plain builds it then).
func Lazy(src Source) *Node { return &Node{src: src} }

// SourceOf returns the Source of v when v is a lazy Node no child of
// which was replaced, else nil.
func SourceOf(v any) Source {
	if n, ok := v.(*Node); ok && n.src != nil && len(n.kids) == 0 && len(n.ikids) == 0 {
		return n.src
	}
	return nil
}

// object reports whether the Node stands for an object.
func (n *Node) object() bool {
	if n.src != nil {
		return n.src.Object()
	}
	_, ok := n.base.(map[string]any)
	return ok
}

// length is the Node's member or element count.
func (n *Node) length() int {
	switch b := n.base.(type) {
	case map[string]any:
		return len(b)
	case []any:
		return len(b)
	}
	return n.src.Len()
}

// Len returns the number of members or elements of a container (plain or
// overlay), 0 for a scalar.
func Len(v any) int {
	switch x := v.(type) {
	case map[string]any:
		return len(x)
	case []any:
		return len(x)
	case *Node:
		return x.length()
	}
	return 0
}

// Keys returns the member names of an object (plain or overlay): a lazy
// Node's in text order, a map's in map order.
func Keys(v any) []string {
	switch x := v.(type) {
	case map[string]any:
		return slices.Collect(maps.Keys(x))
	case *Node:
		if m, ok := x.base.(map[string]any); ok {
			return slices.Collect(maps.Keys(m))
		}
		if x.src != nil && x.src.Object() {
			return x.src.Keys()
		}
	}
	return nil
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
		if x.object() {
			if c, ok := x.kids[tok]; ok {
				return c, true
			}
			if x.src != nil {
				return x.src.Member(tok)
			}
			c, ok := x.base.(map[string]any)[tok]
			return c, ok
		}
		i, err := index.Parse(tok)
		if err != nil || i >= x.length() {
			return nil, false
		}
		if c, ok := x.ikids[i]; ok {
			return c, true
		}
		if x.src != nil {
			return x.src.Elem(i), true
		}
		return x.base.([]any)[i], true
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
		b := n.base
		if n.src != nil {
			b = n.src.Build()
			if len(n.kids) == 0 && len(n.ikids) == 0 {
				n.mat = b
				return
			}
		}
		switch b := b.(type) {
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
		n.base, n.src, n.kids, n.ikids = x.base, x.src, maps.Clone(x.kids), maps.Clone(x.ikids)
	default:
		n.base = x
	}
	nc := Set(child, p[1:], val)
	if n.object() {
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
	m    map[string]any // n.base; nil over a Source
	base traits.Mapper  // the base map as CEL sees it; nil over a Source
}

type ovListVal struct {
	a types.Adapter
	n *Node
	l []any // n.base; nil over a Source
	k int   // the length
}

// CELValue is the CEL value of n for the adapter a (which converts its
// children): it reads as the CEL map or list of n's plain container. Over
// a Source, members and elements are read from it as they are asked for.
func CELValue(a types.Adapter, n *Node) ref.Val {
	if n.src != nil {
		if n.src.Object() {
			return &ovMapVal{a: a, n: n}
		}
		return &ovListVal{a: a, n: n, k: n.src.Len()}
	}
	if m, ok := n.base.(map[string]any); ok {
		return &ovMapVal{a: a, n: n, m: m, base: types.NewStringInterfaceMap(a, m)}
	}
	l := n.base.([]any)
	return &ovListVal{a: a, n: n, l: l, k: len(l)}
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
	if m.base == nil {
		// As the adapter's map of strings: a key that is not a string is
		// not found.
		s, ok := key.(types.String)
		if !ok || m.n.src.Len() == 0 {
			return nil, false
		}
		c, ok := m.n.src.Member(string(s))
		if !ok {
			return nil, false
		}
		return m.a.NativeToValue(c), true
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
func (m *ovMapVal) Iterator() traits.Iterator {
	if m.base == nil {
		return &keyIterator{keys: m.n.src.Keys()}
	}
	return m.base.Iterator()
}

func (m *ovMapVal) Size() ref.Val { return types.Int(m.n.length()) }

func (m *ovMapVal) IsZeroValue() bool { return m.n.length() == 0 }

func (m *ovMapVal) Equal(other ref.Val) ref.Val {
	otherMap, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if m.Size() != otherMap.Size() {
		return types.False
	}
	same := func(k string) bool {
		key := types.String(k)
		thisVal, _ := m.Find(key)
		otherVal, found := otherMap.Find(key)
		return found && types.Equal(thisVal, otherVal) != types.False
	}
	if m.base == nil {
		for _, k := range m.n.src.Keys() {
			if !same(k) {
				return types.False
			}
		}
		return types.True
	}
	for k := range m.m {
		if !same(k) {
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
	if l.l == nil {
		return l.a.NativeToValue(l.n.src.Elem(i))
	}
	return l.a.NativeToValue(l.l[i])
}

func (l *ovListVal) Get(index ref.Val) ref.Val {
	ind, err := types.GetOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if ind < 0 || ind >= l.k {
		return types.NewErr("index '%d' out of range in list size '%d'", ind, l.k)
	}
	return l.elem(ind)
}

func (l *ovListVal) Size() ref.Val     { return types.Int(l.k) }
func (l *ovListVal) IsZeroValue() bool { return l.k == 0 }

func (l *ovListVal) Contains(e ref.Val) ref.Val {
	for i := range l.k {
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
	for i := range l.k {
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

func (it *ovListIterator) HasNext() ref.Val { return types.Bool(it.cursor < it.l.k) }

func (it *ovListIterator) Next() ref.Val {
	if it.cursor < it.l.k {
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

// keyIterator ranges over a lazy object's member names, in text order.
type keyIterator struct {
	keys   []string
	cursor int
}

func (it *keyIterator) HasNext() ref.Val { return types.Bool(it.cursor < len(it.keys)) }

func (it *keyIterator) Next() ref.Val {
	if it.cursor < len(it.keys) {
		k := it.keys[it.cursor]
		it.cursor++
		return types.String(k)
	}
	return nil
}

func (it *keyIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}
func (it *keyIterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (it *keyIterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (it *keyIterator) Type() ref.Type                 { return types.IteratorType }
func (it *keyIterator) Value() any                     { return nil }

// IsObject reports whether v is an object: a map[string]any or a Node over
// one (or over a Source of one).
func IsObject(v any) bool {
	switch v.(type) {
	case map[string]any:
		return true
	case *Node:
		return v.(*Node).object()
	}
	return false
}

// IsArray reports whether v is an array: a []any or a Node over one (or
// over a Source of one).
func IsArray(v any) bool {
	switch x := v.(type) {
	case []any:
		return true
	case *Node:
		return !x.object()
	}
	return false
}
