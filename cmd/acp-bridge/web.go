package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/acp-bridge/acp-bridge/tools/web"
)

// webConfig is the config file's web section: the search service
// web_search asks (none: the tool is not offered).
type webConfig struct {
	Search struct {
		// SearxNG is a SearxNG instance's base URL (env ACP_BRIDGE_SEARXNG_URL).
		SearxNG string `yaml:"searxng"`
		// BraveAPIKeyEnv names the variable holding a Brave Search API key.
		BraveAPIKeyEnv string `yaml:"brave_api_key_env"`
		// BraveURL replaces the Brave endpoint (a test's fake).
		BraveURL string `yaml:"brave_url"`
	} `yaml:"search"`
}

// check says what is wrong with the section, nil when nothing is.
func (w webConfig) check() error {
	s := w.Search
	if s.SearxNG != "" {
		if err := checkURL(s.SearxNG); err != nil {
			return fmt.Errorf("web.search.searxng %q %v", s.SearxNG, err)
		}
	}
	if s.BraveURL != "" {
		if err := checkURL(s.BraveURL); err != nil {
			return fmt.Errorf("web.search.brave_url %q %v", s.BraveURL, err)
		}
	}
	if s.SearxNG != "" && s.BraveAPIKeyEnv != "" {
		return fmt.Errorf("web.search: give searxng or brave_api_key_env, not both")
	}
	return nil
}

// webOptions are the web tools' options: a search service when one is
// configured (a Brave key variable that is empty offers none, and says so).
func (c *config) webOptions(logger *slog.Logger) *web.Options {
	o := &web.Options{}
	s := c.web.Search
	switch {
	case s.SearxNG != "":
		o.Search = &web.Search{SearxNG: s.SearxNG}
	case s.BraveAPIKeyEnv != "":
		if key := os.Getenv(s.BraveAPIKeyEnv); key != "" {
			o.Search = &web.Search{BraveKey: key, BraveURL: s.BraveURL}
		} else {
			logger.Warn("web_search is not offered: the Brave API key variable is empty", "variable", s.BraveAPIKeyEnv)
		}
	}
	return o
}

// searchChecks: with a search service configured, whether it answers a
// query with results (doctor). Nothing when none is configured.
func searchChecks(ctx context.Context, cfg *config) []check {
	s := cfg.web.Search
	if s.SearxNG == "" && s.BraveAPIKeyEnv == "" {
		return nil
	}
	o := cfg.webOptions(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if o.Search == nil {
		return []check{{name: "search", msg: s.BraveAPIKeyEnv + " is not set: web_search is not offered",
			fix: "set " + s.BraveAPIKeyEnv + " to a Brave Search API key in the environment the editor starts acp-bridge with"}}
	}
	r, err := web.Probe(ctx, o, "acp-bridge")
	if err != nil {
		return []check{{name: "search", msg: o.Search.Name() + ": " + err.Error(),
			fix: "check web.search in the config file and that the service answers JSON"}}
	}
	return []check{{name: "search", ok: true, msg: fmt.Sprintf("%s answers (%d results for a test query)", o.Search.Name(), len(r.Results))}}
}
