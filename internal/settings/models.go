package settings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm/prices"
)

// ModelID names a model: its provider and its name.
type ModelID struct {
	Provider string
	Name     string
}

// String is "provider/name".
func (m ModelID) String() string { return m.Provider + "/" + m.Name }

// parseModelID reads "provider/name"; the name may hold further slashes
// (OpenRouter's "openai/gpt-4o" under provider openai with a base URL).
func parseModelID(s string) (ModelID, string) {
	provider, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	switch {
	case !ok || provider == "" || name == "":
		return ModelID{}, "must be provider/name"
	case !slices.Contains(Providers, provider):
		return ModelID{}, fmt.Sprintf("provider %q must be one of %s", provider, strings.Join(Providers, ", "))
	}
	return ModelID{Provider: provider, Name: name}, ""
}

// modelItem accepts a provider/name item of model.available.
func modelItem(it string) (any, string) {
	id, reason := parseModelID(it)
	return id, reason
}

// parsePrice reads "provider/name=input,output[,cacheRead[,cacheWrite]]".
func parsePrice(s string) (ModelID, agent.ModelCost, string) {
	model, prices, ok := strings.Cut(s, "=")
	if !ok {
		return ModelID{}, agent.ModelCost{}, "must be provider/name=input,output[,cacheRead[,cacheWrite]] (US dollars per million tokens)"
	}
	id, reason := parseModelID(model)
	if reason != "" {
		return ModelID{}, agent.ModelCost{}, reason
	}
	parts := strings.Split(prices, ",")
	if len(parts) < 2 || len(parts) > 4 {
		return ModelID{}, agent.ModelCost{}, fmt.Sprintf("must give 2 to 4 prices (input,output[,cacheRead[,cacheWrite]]), has %d", len(parts))
	}
	var v [4]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 1e6 {
			return ModelID{}, agent.ModelCost{}, fmt.Sprintf("price %q must be a number from 0 to 1000000", p)
		}
		v[i] = f
	}
	return id, agent.ModelCost{Input: v[0], Output: v[1], CacheRead: v[2], CacheWrite: v[3]}, ""
}

// priceItem accepts a model.prices item.
func priceItem(it string) (any, string) {
	id, _, reason := parsePrice(it)
	return id, reason
}

// AvailableModels is model.provider/model.name followed by the models of
// model.available, each once, in that order.
func (m Model) AvailableModels() []ModelID {
	out := []ModelID{{Provider: m.Provider, Name: m.Name}}
	for _, it := range m.Available {
		id, reason := parseModelID(it)
		if reason == "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// Price is the price of a model: model.prices, else the table of known
// models (package prices); ok is false for a model without one (its
// usage costs 0).
func (m Model) Price(id ModelID) (cost agent.ModelCost, ok bool) {
	for _, it := range m.Prices {
		pid, c, reason := parsePrice(it)
		if reason == "" && pid == id {
			return c, true
		}
	}
	return prices.Of(id.Provider, id.Name)
}
