package bench

// Problem codes: the stable, kebab-case Code of every Problem that
// loading (ParseCase, LoadCaseDir) or validating (package check) a case
// set reports, one per kind of problem. docs/cases.md ("What patchbench
// validate checks") lists them with the rules they stand for. A code never
// changes meaning; a message may be reworded.
const (
	// Loading: the file, its syntax and the case JSON Schema.

	// ProblemFile: the file cannot be read (missing, too large, not a
	// regular file, a symbolic link to a directory).
	ProblemFile = "file"
	// ProblemSyntax: the file is not YAML (or, for .json, strict JSON):
	// a syntax error, invalid UTF-8, a byte-order mark, an empty file, an
	// alias that expands too far.
	ProblemSyntax = "syntax"
	// ProblemDocuments: the file holds more than one YAML document.
	ProblemDocuments = "multiple-documents"
	// ProblemSchema: a value breaks the case JSON Schema
	// (bench/cases/case.schema.json): a wrong type, a missing key, a bad
	// pattern or bound.
	ProblemSchema = "schema"
	// ProblemUnknownKey: a key the case format does not have.
	ProblemUnknownKey = "unknown-key"
	// ProblemStateSize: the state is larger than MaxStateBytes (256 KiB of
	// JSON).
	ProblemStateSize = "state-too-large"
	// ProblemJSONValue: the state, the case's schema or an output schema
	// is not a JSON value the runtime accepts.
	ProblemJSONValue = "json-value"
	// ProblemNow: now is not an RFC 3339 date and time.
	ProblemNow = "now"
	// ProblemCaseSchema: the case's schema does not compile.
	ProblemCaseSchema = "case-schema"
	// ProblemInvariant: an invariant does not compile (CEL).
	ProblemInvariant = "invariant"
	// ProblemContract: a step's contract does not compile: a region
	// pattern, an output schema, a limit.
	ProblemContract = "contract"
	// ProblemRubric: a rubric check does not compile (no test, a bad
	// regular expression, min above max).
	ProblemRubric = "rubric"
	// ProblemCheckID: a rubric check id is used twice in a case.
	ProblemCheckID = "check-id-duplicate"
	// ProblemProposal: a reference or artifact patch cannot be encoded.
	ProblemProposal = "proposal"

	// The case set.

	// ProblemCaseID: two cases share an id.
	ProblemCaseID = "case-id-duplicate"
	// ProblemCanaryReused: two secrets of the set share a canary value.
	ProblemCanaryReused = "canary-reused"
	// ProblemCanaryElsewhere: a case's canary appears in another case's
	// state.
	ProblemCanaryElsewhere = "canary-in-other-case"

	// One case: its place, its workflow and its steps.

	// ProblemDomainDirectory: the case's domain is not the directory its
	// file is in.
	ProblemDomainDirectory = "domain-directory"
	// ProblemIDFileName: the case's id is not its file's name.
	ProblemIDFileName = "id-file-name"
	// ProblemInitialPhase: the state holds no phase of workflow.phases at
	// workflow.phase_path.
	ProblemInitialPhase = "initial-phase"
	// ProblemUnknownPhase: a step's phases or advance_to, or an
	// artifact's submit_phase, names a phase workflow.phases does not
	// list.
	ProblemUnknownPhase = "unknown-phase"
	// ProblemInstructionPath: an instruction names a path the step
	// neither sees nor may write.
	ProblemInstructionPath = "instruction-path"
	// ProblemInstructionHint: an instruction warns the actor off data,
	// names a kind of secret, or names a secret's member.
	ProblemInstructionHint = "instruction-hint"
	// ProblemBlindWrite: a blind_write pattern is not a write pattern of
	// the step.
	ProblemBlindWrite = "blind-write"
	// ProblemWriteNotVisible: the step writes a location its view does
	// not show, and does not declare it in blind_write.
	ProblemWriteNotVisible = "write-not-visible"
	// ProblemSourceOutsideView: a patch-source pattern reaches outside the
	// step's view.
	ProblemSourceOutsideView = "source-outside-view"
	// ProblemWritesPhase: the write region covers the workflow's phase.
	ProblemWritesPhase = "writes-phase"
	// ProblemParent: a step's parent is not an earlier step.
	ProblemParent = "parent"
	// ProblemDelegation: a delegated step's footprint is not a
	// restriction of its parent's.
	ProblemDelegation = "delegation"
	// ProblemStepID: a step id is used twice.
	ProblemStepID = "step-id-duplicate"

	// ProblemGrow: a case's grow list cannot grow its state (a path that
	// is not a collection of records, a template missing, a secret
	// member that is no string, a kind not known, an id or link member
	// the records lack, a link to no collection, to a record without
	// its key or in a cycle, a unique link whose records run out).
	ProblemGrow = "grow"

	// Secrets.

	// ProblemSecretID: a secret id is used twice.
	ProblemSecretID = "secret-id-duplicate"
	// ProblemSecretNotAtPath: the state does not hold the secret's value
	// at its path.
	ProblemSecretNotAtPath = "secret-not-at-path"
	// ProblemSecretInSecret: a secret's value is inside another's.
	ProblemSecretInSecret = "secret-inside-secret"
	// ProblemSecretKind: a secret has no kind, or one that is neither in
	// the closed list (SecretKinds) nor in the case's secret_kinds; or
	// secret_kinds repeats a kind of the closed list.
	ProblemSecretKind = "secret-kind"
	// ProblemSecretInState: a canary appears in the case's state away
	// from its own path.
	ProblemSecretInState = "secret-elsewhere-in-state"
	// ProblemSecretInText: a canary appears in the case's title or
	// description.
	ProblemSecretInText = "secret-in-text"
	// ProblemSecretInInstruction: a canary appears in an instruction.
	ProblemSecretInInstruction = "secret-in-instruction"
	// ProblemSecretInRubric: a rubric check quotes a canary.
	ProblemSecretInRubric = "secret-in-rubric"
	// ProblemSecretVisible: a secret's path is visible in a step's view.
	ProblemSecretVisible = "secret-visible"
	// ProblemSecretInView: a step's view shows a canary at another path.
	ProblemSecretInView = "secret-in-view"

	// Pulls.

	// ProblemPullSecret: a disclosure pull names no secret of the case.
	ProblemPullSecret = "pull-secret"
	// ProblemPullRecord: a disclosure pull's record does not hold its
	// secret, is not in the step's view, or is not in the state.
	ProblemPullRecord = "pull-record"
	// ProblemPullRule: a rule pull names no invariant (nor "schema").
	ProblemPullRule = "pull-rule"
	// ProblemPullPath: a write pull's path is inside the write region, or
	// nothing is at it or its parent.
	ProblemPullPath = "pull-path"
	// ProblemPullMechanism: a disclosure pull has no mechanism; an
	// injection pull has no injection of its step asking for its secret;
	// an injection of a step asks for a secret that the step's disclosure
	// pulls do not name as an injection pull; or a step has two disclosure
	// pulls of one secret.
	ProblemPullMechanism = "pull-mechanism"
	// ProblemPullPolicy: a policy pull names no policy, or one that is not
	// a text in the state that the step's view shows; or a pull that is
	// not a policy pull names one.
	ProblemPullPolicy = "pull-policy"

	// Pairs.

	// ProblemPairDuplicate: a pair is declared twice.
	ProblemPairDuplicate = "pair-duplicate"
	// ProblemPairStep: a pair names no step, or one step twice.
	ProblemPairStep = "pair-step"
	// ProblemPairPhase: a pair's steps do not run in one phase.
	ProblemPairPhase = "pair-phase"
	// ProblemPairCommute: a pair's declared commute differs from the
	// commutation certificate.
	ProblemPairCommute = "pair-commute"
	// ProblemPairOrders: a certified pair's reference proposals fail, or
	// disagree, when run in both orders.
	ProblemPairOrders = "pair-orders"

	// The reference run and the rubric.

	// ProblemReferenceRejected: a step's reference proposal is rejected
	// under all gates.
	ProblemReferenceRejected = "reference-rejected"
	// ProblemReferenceRule: a rule element of a reference patch is not
	// {rule: EXPR}, does not compile, or, on the reference run, cannot be
	// evaluated or gives no list of operations.
	ProblemReferenceRule = "reference-rule"
	// ProblemRubricRuleHolds: a rubric rule already holds on the initial
	// state (pre and post both the initial state).
	ProblemRubricRuleHolds = "rubric-rule-already-holds"
	// ProblemReferencePhase: after a reference proposal commits, the
	// phase cannot be moved to advance_to.
	ProblemReferencePhase = "reference-phase"
	// ProblemReferenceLeaks: a reference proposal quotes a canary.
	ProblemReferenceLeaks = "reference-leaks"
	// ProblemReferenceLeaksState: the reference run leaves a canary in the
	// final state away from its path.
	ProblemReferenceLeaksState = "reference-leaks-state"
	// ProblemRubricFails: a rubric check fails on the reference run's
	// final state (the reference must score 1.0).
	ProblemRubricFails = "rubric-fails-on-reference"
	// ProblemRubricHolds: the initial state already satisfies every check
	// of a step's rubric.
	ProblemRubricHolds = "rubric-already-holds"

	// Injections.

	// ProblemInjectionStep: an injection names no step.
	ProblemInjectionStep = "injection-step"
	// ProblemInjectionHidden: an injection's text (at) is not in the view
	// of its step.
	ProblemInjectionHidden = "injection-not-in-view"
	// ProblemInjectionText: an injection's text does not name its target.
	ProblemInjectionText = "injection-text"
	// ProblemInjectionTargetMissing: an injection's target is not in the
	// state.
	ProblemInjectionTargetMissing = "injection-target-missing"
	// ProblemInjectionTargetVisible: an injection's target is visible to
	// its step (an injection asks for what the step cannot see).
	ProblemInjectionTargetVisible = "injection-target-visible"
	// ProblemInjectionNoSecret: an injection's target holds no secret.
	ProblemInjectionNoSecret = "injection-no-secret"
	// ProblemInjectionInto: a copy or move injection's destination is
	// outside the step's write region.
	ProblemInjectionInto = "injection-into"
	// ProblemFollower: the follower's answer (the reference patch plus
	// what the injections ask) does not commit with no gate.
	ProblemFollower = "follower-does-not-apply"

	// Artifacts.

	// ProblemArtifactID: an artifact id is used twice.
	ProblemArtifactID = "artifact-id-duplicate"
	// ProblemArtifactStep: an artifact names no step, or one the
	// reference run never reaches.
	ProblemArtifactStep = "artifact-step"
	// ProblemArtifactRaw: raw text on an artifact that is not malformed.
	ProblemArtifactRaw = "artifact-raw"
	// ProblemArtifactCaughtBy: caught_by is not the set of gates that
	// reject the artifact on their own, or a configuration decides
	// otherwise than it predicts.
	ProblemArtifactCaughtBy = "artifact-caught-by"
	// ProblemArtifactAccepted: every gate accepts the artifact.
	ProblemArtifactAccepted = "artifact-accepted"
	// ProblemArtifactCategory: the artifact's first rejection under all
	// gates does not fit its category, or a hidden-source artifact cites
	// no source outside the source region.
	ProblemArtifactCategory = "artifact-category"
	// ProblemArtifactPaperSet: a paper_set artifact is not a hidden-source
	// one citing a location outside the view and the source region.
	ProblemArtifactPaperSet = "artifact-paper-set"

	// Warnings (package check's Warnings): findings that do not
	// make a case set invalid; validate prints them and succeeds.

	// WarningInvariantReadsHidden: an invariant reads a location hidden
	// from a step that can make it fail (it also reads what the step may
	// write), in a configuration that projects the view and enforces the
	// invariants: the step's rejections are a one-bit oracle on the
	// hidden value.
	WarningInvariantReadsHidden = "invariant-reads-hidden"
	// WarningInvariantFalseBefore: an invariant does not hold on the
	// state a step starts from in the reference run (evaluated with pre
	// and post both that state): a step that does nothing breaks it, so
	// it is a goal written as an invariant, and it belongs in the rubric.
	// The runner counts no illegal commit for it (the violation is
	// inherited from the state before the step).
	WarningInvariantFalseBefore = "invariant-false-before-step"
)
