package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/workflows"
)

// jobSearchAttributes are the custom search attributes a prompt sets
// (agent.JobStatus in short), through which Temporal's visibility filters
// the product's jobs ("all jobs waiting for approval" in the Temporal
// UI's list).
var jobSearchAttributes = map[string]enumspb.IndexedValueType{
	agent.SearchAttrStatus:  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	agent.SearchAttrTokens:  enumspb.INDEXED_VALUE_TYPE_INT,
	agent.SearchAttrCostUsd: enumspb.INDEXED_VALUE_TYPE_DOUBLE,
}

// ensureJobSearch registers the job's search attributes where the
// namespace lacks them, so the Temporal UI can filter jobs by status, and
// tells the Prompt workflow whether it may set them. It runs at every
// worker start, so attributes added later reach an existing namespace
// too. A worker that may not add them (Temporal Cloud, a role without
// operator rights) says so once: its prompts keep their memo only
// (starter top works from it). A namespace that does not exist is the
// error, naming the step that makes it.
func ensureJobSearch(c sdkclient.Client, namespace string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := EnsureJobSearch(ctx, c, namespace)
	var missing *serviceerror.NamespaceNotFound
	if errors.As(err, &missing) {
		return fmt.Errorf("namespace %q does not exist on this Temporal server: create it with `starter cluster init` (or temporal operator namespace create --namespace %s)", namespace, namespace)
	}
	workflows.SetSearchAttributesReady(err == nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: jobs are not filterable by status in the Temporal UI: %s\n", line.First(err.Error()))
	}
	return nil
}

// EnsureJobSearch adds the job's search attributes that namespace lacks
// (the worker at start, and `starter cluster init`), and fails, naming
// the attribute, when one exists with another type or is a system
// attribute.
func EnsureJobSearch(ctx context.Context, c sdkclient.Client, namespace string) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := make(map[string]enumspb.IndexedValueType)
	for name, typ := range jobSearchAttributes {
		if _, ok := have.GetSystemAttributes()[name]; ok {
			return fmt.Errorf("search attribute %q is a system attribute", name)
		}
		got, ok := have.GetCustomAttributes()[name]
		if !ok {
			missing[name] = typ
			continue
		}
		if got != typ {
			return fmt.Errorf("search attribute %q exists with type %s, not %s", name, got, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("add search attributes to namespace %q: %w", namespace, err)
	}
	return nil
}

// JobSearchAttributes are the names of the job's search attributes, sorted.
func JobSearchAttributes() []string {
	return slices.Sorted(maps.Keys(jobSearchAttributes))
}
