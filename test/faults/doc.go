// Package faults holds the fault-injection tests of issue 7: worker
// processes killed with SIGKILL at seeded random points of a retrying
// prompt, the embedded Temporal server process killed and restarted,
// models that hang or cut their stream, a session store that becomes
// read-only or full, and signals with wrong payloads.
//
// The tests run the real embedded server. Workers and the server under
// test run as child processes (the test binary re-executed in a child
// mode, see TestMain) so that they can be killed for real. Every test is
// skipped under `go test -short`; the package is bounded to a few minutes
// on two cores. docs/reliability.md lists what is tested and how to rerun
// it.
package faults
