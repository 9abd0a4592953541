package rpcserver

import (
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
)

// models is get_available_models: model.provider/model.name and
// model.available as Model objects.
func models(sb *client.Session) []rpc.Model {
	s := sb.Settings()
	ids := sb.Models()
	out := make([]rpc.Model, len(ids))
	for i, id := range ids {
		out[i] = modelObject(s, id)
	}
	return out
}

// setModel is set_model: it answers with the chosen model's object.
func setModel(ctx context.Context, sb *client.Session, provider, modelID string) (rpc.Model, error) {
	if err := sb.SetModel(ctx, provider, modelID); err != nil {
		return rpc.Model{}, err
	}
	return modelObject(sb.Settings(), settings.ModelID{Provider: provider, Name: modelID}), nil
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
