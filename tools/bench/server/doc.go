// Package serverbench holds the benchmarks of the whole Server on
// catalogues of the generator, through the server package's exported API
// with a real token verifier: each catalogue route on the load harness's
// shapes of traffic, with the answer cache on and off (BenchmarkTraffic),
// and the lookups of many cards at once (BenchmarkLookups).
// docs/BENCHMARKS.md has their figures:
//
//	go test -C tools ./bench/server -run '^$' -bench Traffic -benchtime 20000x -args -traffic-cards=100000
//	go test -C tools ./bench/server -run '^$' -bench Lookups -benchtime 20000x -args -lookup-cards=1000000
package serverbench
