// The `temporal` CLI stand-in of the README test
// on machines without it. It runs, through the Go SDK against the same
// server, the equivalents of the only commands the README shows:
//
//	temporal workflow signal   --workflow-id ID --name NAME [--input JSON]
//	temporal workflow query    --workflow-id ID --type TYPE [--input JSON]
//	temporal workflow metadata --workflow-id ID
//
// signal and query send --input as one JSON argument, as the CLI does;
// metadata runs the SDK's built-in __temporal_workflow_metadata query and
// prints the current details. The server is TEMPORAL_ADDRESS (or
// --address) in TEMPORAL_NAMESPACE (or --namespace, default "default").
// Any other command exits 2 naming it, so a README that starts using one
// fails here until this stand-in learns it.
//
// The real CLI is not built instead because no release can be built from
// the Go module proxy at our pinned API: v1.9.1 (api v1.63.5) has a
// replace directive to a nested module the proxy does not serve, and the
// older v1.5.1 pins api v1.53.0 and another server, which would mean
// compiling a second Temporal server.
package readme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
)

// envTemporalStandIn makes this test binary the `temporal` stand-in
// (TestMain): the README test puts a `temporal` on PATH that runs it so.
const envTemporalStandIn = "READMETEST_TEMPORAL_STANDIN"

func TestMain(m *testing.M) {
	if os.Getenv(envTemporalStandIn) != "" {
		os.Exit(temporalStandIn(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func temporalStandIn(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "workflow" {
		fmt.Fprintf(stderr, "temporal (README test stand-in): unsupported command %q: only workflow signal, query and metadata\n", args)
		return 2
	}
	sub := args[1]
	fs := pflag.NewFlagSet("temporal workflow "+sub, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	id := fs.StringP("workflow-id", "w", "", "workflow id")
	runID := fs.StringP("run-id", "r", "", "run id")
	address := fs.String("address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "frontend host:port")
	namespace := fs.StringP("namespace", "n", envOr("TEMPORAL_NAMESPACE", "default"), "namespace")
	input := fs.StringP("input", "i", "", "JSON argument")
	var name, queryType *string
	switch sub {
	case "signal":
		name = fs.String("name", "", "signal name")
	case "query":
		queryType = fs.String("type", "", "query type")
	case "metadata":
	default:
		fmt.Fprintf(stderr, "temporal (README test stand-in): unsupported command \"workflow %s\": only signal, query and metadata\n", sub)
		return 2
	}
	if err := fs.Parse(args[2:]); err != nil {
		return 2
	}
	if *id == "" {
		fmt.Fprintln(stderr, "temporal workflow "+sub+": --workflow-id is required")
		return 2
	}
	var arg []any
	if *input != "" {
		if !json.Valid([]byte(*input)) {
			fmt.Fprintf(stderr, "temporal workflow %s: --input is not JSON: %s\n", sub, *input)
			return 2
		}
		arg = append(arg, json.RawMessage(*input))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: *address, Namespace: *namespace})
	if err != nil {
		fmt.Fprintf(stderr, "temporal: dial %s: %v\n", *address, err)
		return 1
	}
	defer c.Close()
	switch sub {
	case "signal":
		err = c.SignalWorkflow(ctx, *id, *runID, *name, firstOrNil(arg))
		if err == nil {
			fmt.Fprintln(stdout, "Signal workflow succeeded")
		}
	case "query":
		err = standInQuery(ctx, c, *id, *runID, *queryType, arg, stdout)
	case "metadata":
		err = standInMetadata(ctx, c, *id, *runID, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "temporal workflow %s: %v\n", sub, err)
		return 1
	}
	return 0
}

// standInQuery prints the query's result as JSON.
func standInQuery(ctx context.Context, c client.Client, id, runID, queryType string, arg []any, w io.Writer) error {
	v, err := c.QueryWorkflow(ctx, id, runID, queryType, arg...)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := v.Get(&raw); err != nil {
		return err
	}
	fmt.Fprintf(w, "Query result:\n  QueryResult  %s\n", raw)
	return nil
}

// standInMetadata prints the workflow's current details, as `temporal workflow
// metadata` does (describe does not show them).
func standInMetadata(ctx context.Context, c client.Client, id, runID string, w io.Writer) error {
	v, err := c.QueryWorkflow(ctx, id, runID, "__temporal_workflow_metadata")
	if err != nil {
		return err
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		return err
	}
	if md.GetCurrentDetails() == "" {
		return errors.New("no current details")
	}
	fmt.Fprintf(w, "Metadata:\n  CurrentDetails  %s\n", md.GetCurrentDetails())
	return nil
}

// firstOrNil is the signal's one argument, or none.
func firstOrNil(args []any) any {
	if len(args) == 0 {
		return nil
	}
	return args[0]
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
