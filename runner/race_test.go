//go:build race

package runner

// raceDetector says the tests run under the race detector, ten times
// slower: the heaviest fault tests then take a sample of their inputs.
const raceDetector = true
