//go:build race

package catalogdbench

// raceDetector says whether the benchmarks are built with the race
// detector, whose cost they would measure.
const raceDetector = true
