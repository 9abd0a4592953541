// Package readme runs the README's commands, so the README cannot drift
// from the product.
//
// TestREADME_CommandsRunAsWritten (skipped under -short: it runs the
// embedded Temporal server) extracts every ```sh and ```bash block of
// README.md and runs each with bash, in order, from the repository root
// (`go run ./starter` works only there), with `set -e -o pipefail`: a
// block passes when every command in it exits 0. The environment is the
// test's own, with a scratch DURABLE_AGENT_HOME, free ports for the
// embedded server and its UI (DURABLE_AGENT_DEV_PORT, _UIPORT and
// TEMPORAL_ADDRESS, so a server already running on this machine is never
// used), no other DURABLE_AGENT_* or TEMPORAL_* variable, TMPDIR unset
// (temporary directories are under /tmp, as the README shows), and
// ANTHROPIC_API_KEY set to a fake key (the README exports a real one in a
// block that is skipped).
//
// `go` on the blocks' PATH is a shim: `go run ./starter ARGS` and
// `go run ./worker ARGS` from the repository root run binaries the test
// built once from the same source (what `go run` would build, without
// linking 250 MB per command); `go test ARGS` is recorded, not run (it
// would run this test again), and must be a command of .ci/run; anything
// else goes to the real go.
//
// A block may be preceded by HTML comments (invisible on GitHub) that say
// how to run it; only blank lines may stand between them and the fence:
//
//	<!-- readme-test: background until "TEXT" -->
//	    a command for a second terminal that keeps running (the worker):
//	    started in the background, later blocks run once its output shows
//	    TEXT; it is interrupted (Ctrl-C) after the last block and must
//	    then exit 0.
//	<!-- readme-test: expect "TEXT" ... -->
//	    the block's output (stdout and stderr) contains each Go-quoted TEXT.
//	<!-- readme-test: exit N -->
//	    the block exits N instead of 0 (its last command).
//	<!-- readme-test: needs PROGRAM -->
//	    run it only when PROGRAM is on PATH, else skip. For `temporal`
//	    there is always one: without the real CLI on PATH, the test puts
//	    first on the blocks' PATH a stand-in: the test binary itself
//	    (temporalcli_test.go, through TestMain), which runs the equivalents of the
//	    README's `temporal workflow signal`, `query` and `metadata` through
//	    the Go SDK against the same server (and refuses any other command).
//	    The real CLI is not built instead: no release builds from the Go
//	    module proxy at the API version this module pins.
//	<!-- readme-test: skip REASON -->
//	    not run: only for what cannot run here (a real provider key).
//	<!-- readme-test: output -->
//	    on a plain ``` block: the output the previous command block shows.
//	    Its non-blank lines must appear in that block's output in order,
//	    each as a whole line (spaces trimmed), where "…" matches anything
//	    and a run of digits matches any number (ports, ids, temp names).
//
// Every skipped block is named in the test output. TestREADME_Directives
// (also under -short) checks the directives and that the README's test
// command is the one .ci/run runs. TestCheckout_HoldsNoBuildOutputs (also
// under -short) checks that no tracked file is an executable binary or
// over 4 MB.
package readme
