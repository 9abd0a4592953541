//go:build race

package workflows

// raceDetector says the tests run under the race detector, which slows
// workflow code several times over.
const raceDetector = true
