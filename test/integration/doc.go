// Package integration holds the end-to-end tests that run the product on
// the real embedded Temporal server: durable retry timers, signals by
// their CLI names, worker and server restarts, a worker killed mid-call.
// Every test is skipped under `go test -short`.
package integration
