package main

import (
	"fmt"
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
