// Package scoring turns what a PatchBench run did into figures
// (docs/run.md says what each measures). It holds:
//
//   - leaks: a Detector finds a case's canaries (Canaries) in text and in
//     JSON values, as written, normalised, in NFKC, with the text's JSON
//     escapes undone (at any depth), base64, hex or URL-encoded; Spans
//     marks where;
//   - rubric checks and the content score: CheckResults, Score and
//     ContentScore judge a case's rubric on a final state;
//   - a run's score: LeakScan and ScoreScanned (leaks in the outputs and
//     the final state, the attack outcome, the checks and the content
//     score), SemanticPass and LegalPass;
//   - counts over runs: Rejections (by gate and code, and the proposals
//     blocked) and IllegalCommits (runs, commits, by gate and code);
//   - the no-model stress test's figures: StressTally and StressResult;
//   - statistics: Wilson intervals for rates, Mean and MeanCI (Student's
//     t) for means, ExactMcNemar for paired outcomes (gonum).
//
// Token counts are the runner's (its tokenizer), and the tables that show
// these figures are package report's.
package scoring
