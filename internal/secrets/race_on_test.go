//go:build race

package secrets

// raceDetector says whether the tests run under the race detector.
const raceDetector = true
