// Command starter is the client of the durable agent: it starts prompts as
// Temporal workflows and follows them, sends abort_retry / abort /
// set_auto_retry signals, and reads state and events. `starter demo` runs
// everything in one process on an embedded Temporal server.
package main

import (
	"os"

	"github.com/durableagent/durableagent/internal/cli"
	// demo registers `starter demo` (embedded Temporal server + worker).
	_ "github.com/durableagent/durableagent/internal/demo"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Env{}))
}
