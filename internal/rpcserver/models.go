package rpcserver

import (
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
)

// models is get_available_models: model.provider/model.name and
// model.available as Model objects.
func (c *conn) models(context.Context, rpc.Command) (any, error) {
	s, out := c.b.Settings(), rpc.ModelsData{Models: []rpc.Model{}}
	for _, id := range c.b.Models() {
		out.Models = append(out.Models, modelObject(s, id))
	}
	return out, nil
}

// setModel is set_model: it answers with the chosen model's object
// (rpc.Model{} with the error).
func (c *conn) setModel(ctx context.Context, cmd rpc.Command) (any, error) {
	if err := c.b.SetModel(ctx, cmd.Provider, cmd.ModelID); err != nil {
		return rpc.Model{}, err
	}
	return modelObject(c.b.Settings(), settings.ModelID{Provider: cmd.Provider, Name: cmd.ModelID}), nil
}

// modelObject describes a model as the terminal agent's Model object. The
// context window and answer cap are the settings' (model.contextWindow,
// model.maxTokens) for every model.
func modelObject(s settings.Settings, id settings.ModelID) rpc.Model {
	cost, _ := s.Model.Price(id)
	return rpc.Model{
		ID: id.Name, Name: id.Name, API: agent.APIOf(id.Provider), Provider: id.Provider,
		BaseURL: baseURL(s, id.Provider), Reasoning: true, Input: []string{"text", "image"},
		ContextWindow: s.Model.ContextWindow, MaxTokens: s.Model.MaxTokens, Cost: cost,
	}
}

// baseURL is where a provider's requests go: model.baseUrl for
// model.provider, else the provider's public endpoint.
func baseURL(s settings.Settings, provider string) string {
	if provider == s.Model.Provider && s.Model.BaseURL != "" {
		return s.Model.BaseURL
	}
	return map[string]string{"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}[provider]
}
