// Package runtime is the PatchOptic runtime: the verifier that stands
// between LLM actors and a shared JSON state (paper: "PatchOptic for
// Shared-State LLM Workflows with Projected Views and Verified Structured
// Updates", §3; docs/runtime.md). It has no dependency on the rest of the
// module.
//
// A step of a workflow holds an authority triple (O, W, P): a projection
// O of the state to the view its actor sees, a write region W of the
// locations it may change, and a patch-source region P of the locations
// its patch may read when applied. A [Contract] compiles that triple with
// the step's phases, JSON Schemas and CEL invariants, once; it then
// checks any number of proposals, concurrently. One step runs as:
//
//  1. Project: [Contract.View] (or [View]) gives O(x), the part of the
//     state x the actor may see. The view keeps the state's addresses:
//     objects keep their member names and arrays their positions (hidden
//     elements become null), so a JSON Pointer into the view means the
//     same location in the state.
//  2. Propose: the actor answers with an RFC 6902 JSON Patch, bare or as
//     {"patch": [...], "note": "..."}. [DecodeProposal] decodes it once,
//     strictly: duplicate member names, unknown or mis-cased ops and
//     missing members are malformed.
//  3. Verify: [Contract.Verify] runs the gates against the full state,
//     not the view: parse; scope (writes in W, sources in P) or acl
//     (writes in W only) and phase, which look only at the pointers the
//     patch names; apply, on a copy, with RFC 6902 semantics; then schema
//     (the whole state after the patch, and output schemas for written
//     values) and invariants (CEL rules over pre, post and phase).
//  4. Commit or reject: the [Decision] commits only when every gate that
//     ran passed; otherwise the state is exactly as it was. Each gate's
//     outcome is a [GateResult] with a stable code. No message contains a
//     value from outside the view, nor names a hidden array's length or a
//     member at a location the view does not show, so rejections are
//     feedback, not an oracle for hidden data.
//
// Locations are [Pointer] values (RFC 6901), compared token by token;
// sets of locations are [Region] values of pointer patterns in which a
// whole-segment "*" matches any one member name or array index. The
// static [Footprint] of a step, (R, W, P), supports delegation
// ([Footprint.RestrictionOf]), composition ([Footprint.Union]) and the
// [Commutation] certificate that lets two steps of one phase run in
// either order.
//
// Decoded JSON values are nil (null), bool, string, json.Number (a
// number with its exact text), []any (an array) and map[string]any (an
// object); a [Document] holds one together with its text. Values are
// never modified in place: a commit copies the containers on the changed
// paths and shares the rest.
//
// A step costs what its footprint costs, not what the state costs. A
// patch is applied at its foci, the smallest subtrees it reads and writes
// (the containers whose members it changes, or just the values it
// replaces, and the values it copies or tests): the reference semantics
// and the apply library run on the foci alone, the library's result is
// checked there, and the state after the patch is the state before with
// the foci put back. A committed state shares every untouched subtree
// with its predecessor; its text is the old text with the foci's spans
// replaced, built when first asked for (numbers keep their text), and its
// value is built on demand too. The schema gate validates only the
// changed subtrees when the contract's schema allows it
// ([Contract.IncrementalSchema]); invariants read the state lazily. A
// state is parsed once, and its containers are indexed once, however many
// patches are checked against it: [ParseDocument] checks the whole text
// and builds the value when it is first needed, the elements of long
// arrays on every core. A [Session]'s phase move ([SetString])
// writes its state's text as [NewDocument] does, members sorted, and
// encodes again only the subtrees changed since that text was last
// written whole. Whatever this does not cover (a target
// of the whole document, a change to the root container's members, an
// operation the library gets wrong, member names above a focus that the
// library would spell otherwise) takes the whole-document path. Both
// paths give the same decisions and the same committed text.
//
// Application is done by github.com/evanphx/json-patch/v5 under strict
// options, behind this package's own reference semantics of RFC 6902: the
// reference decides applicability and the footprint, applies the
// operations the library is known to get wrong (test, whole-document
// targets, empty member names inside a path), and checks the library's
// result at every written location (every focus) before anything is
// committed. Numbers keep their exact text throughout; test compares
// numbers by value, the schema gate by exact decimal value, and an
// invariant sees a number only as a CEL value that holds it exactly,
// else the rule is rejected with CodeInexactNumber: no float64 rounding
// decides a gate.
package runtime
