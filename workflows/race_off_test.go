//go:build !race

package workflows

// raceDetector says the tests run under the race detector.
const raceDetector = false
