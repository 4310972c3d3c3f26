//go:build !race

package main

// raceDetector says whether the tests, and the catalogd processes they run
// from the test binary, are built with the race detector, which makes each
// goroutine cost several times the memory.
const raceDetector = false
