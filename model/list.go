package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ListModels asks an OpenAI-compatible endpoint for its models (GET
// {baseURL}/models, through go-openai), for the model picker. Ollama, vLLM,
// llama.cpp, LM Studio and the hosted APIs answer it; the caller bounds
// the wait with ctx.
func ListModels(ctx context.Context, baseURL, apiKey string, client *http.Client) ([]string, error) {
	return listModels(ctx, baseURL, apiKey, nil, client)
}

// ListModelsWith is ListModels sending headers (the key among them)
// instead of a bearer key.
func ListModelsWith(ctx context.Context, baseURL string, headers map[string]string, client *http.Client) ([]string, error) {
	return listModels(ctx, baseURL, "", headers, client)
}

func listModels(ctx context.Context, baseURL, apiKey string, headers map[string]string, client *http.Client) ([]string, error) {
	if client == nil {
		client = defaultClient
	}
	if len(headers) > 0 {
		client = sameHostRedirects(client)
	}
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = baseURL
	cfg.HTTPClient = limitedDoer{client, headers}
	list, err := openai.NewClientWithConfig(cfg).ListModels(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s/models: %w", strings.TrimRight(baseURL, "/"), err)
	}
	out := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		// Gemini names its models "models/gemini-2.5-flash"; requests take
		// either form.
		if id := strings.TrimPrefix(m.ID, "models/"); id != "" {
			out = append(out, id)
		}
	}
	return out, nil
}

// limitedDoer bounds the body go-openai decodes whole: a model list is
// small, and an endpoint that sends without end is no list.
type limitedDoer struct {
	c       *http.Client
	headers map[string]string
}

func (d limitedDoer) Do(req *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	resp, err := d.c.Do(req)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, 8<<20), resp.Body}
	}
	return resp, err
}
