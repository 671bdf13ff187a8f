//go:build !race

package runner

// raceDetector says the tests run under the race detector (race_test.go).
const raceDetector = false
