// Package visibility registers the custom search attributes through which
// Temporal's visibility filters the product's jobs ("all jobs waiting for
// approval" in the Temporal UI's list).
//
// The contract:
//   - Jobs names the attributes and their types (the names are agent's
//     SearchAttr* constants, which the Prompt workflow sets).
//   - Ensure adds those a namespace lacks and fails, naming the attribute,
//     when one exists with another type or is a system attribute. It runs
//     on every start, so attributes added later reach an existing
//     namespace too.
package visibility

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
)

// Jobs are the search attributes a prompt sets (agent.JobStatus in short).
var Jobs = map[string]enumspb.IndexedValueType{
	agent.SearchAttrStatus:  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	agent.SearchAttrTokens:  enumspb.INDEXED_VALUE_TYPE_INT,
	agent.SearchAttrCostUsd: enumspb.INDEXED_VALUE_TYPE_DOUBLE,
}

// Ensure adds the attributes of want that namespace lacks.
func Ensure(ctx context.Context, c client.Client, namespace string, want map[string]enumspb.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	have, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := make(map[string]enumspb.IndexedValueType)
	for name, typ := range want {
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
