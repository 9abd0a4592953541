// Command starter is the client of the durable agent: it starts prompts as
// Temporal workflows and follows them, sends abort_retry / abort /
// set_auto_retry signals, and reads state and events. It does not link
// the Temporal server or its Web UI: `starter demo` runs `worker demo`
// (the worker binary links them), building that binary once from the
// source tree into the user cache dir when run from one (demo.go).
package main

import (
	"os"

	"github.com/durableagent/durableagent/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Env{}, demoCmd))
}
