package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ListModels asks an OpenAI-compatible endpoint for its models (GET
// {baseURL}/models), for the model picker. Ollama, vLLM, llama.cpp, LM
// Studio and the hosted APIs answer it; the caller bounds the wait with ctx.
func ListModels(ctx context.Context, baseURL, apiKey string, client *http.Client) ([]string, error) {
	if client == nil {
		client = defaultClient
	}
	u := strings.TrimRight(baseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s: not a model list: %w", u, err)
	}
	out := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		// Gemini names its models "models/gemini-2.5-flash"; requests take
		// either form.
		if id := strings.TrimPrefix(m.ID, "models/"); id != "" {
			out = append(out, id)
		}
	}
	return out, nil
}
