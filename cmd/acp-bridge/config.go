package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/route"
	"github.com/acp-bridge/acp-bridge/rules"
	"github.com/acp-bridge/acp-bridge/settings"
)

// config is every setting, after the layers are applied in order:
// built-in defaults, the config file, the environment, the flags.
type config struct {
	configPath string

	model       string // provider/name, a model name, or script:FILE
	modelSet    bool   // model was chosen explicitly (file, env or flag)
	modelFrom   string // where: "--model", "ACP_BRIDGE_MODEL" or the config file
	baseURL     string
	baseURLFrom string // "--base-url" or "OPENAI_BASE_URL", for errors
	apiKeyEnv   string

	permissionMode string
	toolsMode      string

	maxTurn           int
	maxTokens         int
	maxTokensFlag     bool // --max-tokens: for the chosen model, over its own setting
	contextWindow     int
	images            bool
	imagesSet         bool
	retries           int
	streamIdleTimeout time.Duration
	// compactAt is the share of the context window past which a session
	// compacts itself (0: the agent's default, 0.8; "off" in the file: -1).
	compactAt float64

	logLevel string // "": info on a terminal, warn otherwise (newLogger)
	logFile  string
	// offerBypass puts bypass in the permission-mode picker. Zed re-applies
	// the last picked value to every new session, so one pick would make
	// bypass the default for good; without it, bypass is reached only by
	// /mode or permission_mode.
	offerBypass bool
	// stateDir keeps session logs (session/load, resume, list); "" keeps
	// sessions in memory only.
	stateDir string
	// spillDir receives the full output of truncated commands (bash); ""
	// is the system temp dir. run makes a private one per process.
	spillDir string

	providers []providerConfig // from the file, in file order
	// routes is where each provider's requests go, which the editor may
	// change (providers.go); nil for a scripted model.
	routes *route.Table
	// resolved are the providers the catalog offers (modelChoices).
	resolved []providerConfig

	// policy is the config file's permissions, hooks and timeouts,
	// compiled (rules anchored at each session's workspace).
	policy settings.Policy
	// sandbox is the config file's sandbox settings, the mode overridden
	// by ACP_BRIDGE_SANDBOX and --sandbox (sandbox.go).
	sandbox sandboxConfig

	// web is the web tools' section (web.go).
	web webConfig
}

// fileConfig is the YAML config file.
type fileConfig struct {
	Model          string                `yaml:"model"`
	PermissionMode string                `yaml:"permission_mode"`
	OfferBypass    bool                  `yaml:"offer_bypass"`
	Tools          struct{ Mode string } `yaml:"tools"`
	Providers      yaml.Node             `yaml:"providers"` // a mapping, decoded in order
	Limits         struct {
		MaxTurnRequests   int    `yaml:"max_turn_requests"`
		MaxTokens         int    `yaml:"max_tokens"`
		Retries           *int   `yaml:"retries"`
		StreamIdleTimeout string `yaml:"stream_idle_timeout"`
		CompactAt         string `yaml:"compact_at"`
	} `yaml:"limits"`
	Log struct {
		Level string `yaml:"level"`
		File  string `yaml:"file"`
	} `yaml:"log"`
	Sandbox sandboxConfig `yaml:"sandbox"`
	// The policy keys, as in a project's .acp-bridge/settings.yaml
	// (package settings).
	Permissions settings.Permissions           `yaml:"permissions"`
	Hooks       map[string][]settings.HookSpec `yaml:"hooks"`
	Timeouts    map[string]string              `yaml:"timeouts"`
	Web         webConfig                      `yaml:"web"`
}

type providerConfig struct {
	Name      string        `yaml:"-"`
	BaseURL   string        `yaml:"base_url"`
	APIKeyEnv string        `yaml:"api_key_env"`
	Models    []modelConfig `yaml:"models"`
}

type modelConfig struct {
	Name          string       `yaml:"name"`
	DisplayName   string       `yaml:"display_name"`
	ContextWindow int          `yaml:"context_window"`
	MaxTokens     int          `yaml:"max_tokens"`
	Images        bool         `yaml:"images"`
	Price         *priceConfig `yaml:"price"`
}

type priceConfig struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input"`
	Output      float64 `yaml:"output"`
	Currency    string  `yaml:"currency"`
}

const usage = `acp-bridge: an Agent Client Protocol agent for Zed and other ACP editors.

Usage:
  acp-bridge [flags]          serve ACP over stdin/stdout (what an editor launches)
  acp-bridge serve [flags]    serve ACP over HTTP and WebSocket (--listen, default 127.0.0.1:8741)
  acp-bridge demo [flags]     run an offline demo session and print what an editor would show
  acp-bridge login            store an API key (checked against the endpoint) for this user
  acp-bridge logout           remove the stored keys
  acp-bridge doctor [flags]   check the config, key, endpoint, state dir and bash; say how to fix each
                              (doctor serve [flags]: serve's address, token file, certificate, roots too)
  acp-bridge --version        print the version

Settings come from, lowest first: built-in defaults, the config file, the
environment, the flags.

Flags:
`

const usageMore = `
Models:
  The default is DeepSeek: base URL https://api.deepseek.com, key from
  DEEPSEEK_API_KEY, model deepseek-chat (deepseek-reasoner is also offered).
  Any OpenAI-compatible chat-completions endpoint works (OpenAI, Ollama, vLLM,
  llama.cpp's server, LM Studio): give --base-url (or OPENAI_BASE_URL) and
  --model; the key is read from --api-key-env NAME, else OPENAI_API_KEY (a
  local server needs none). With --base-url the picker offers that endpoint's
  models (its /models list, when it answers within 1.5s) and the config file's
  providers, not the DeepSeek ones. --model script:FILE replays a scripted model.
  Failed requests are retried (429, 5xx, dropped or stalled streams) within two
  minutes in all; a refused connection or a non-API answer ends the turn at once.

Environment:
  ACP_BRIDGE_CONFIG             the config file (like --config)
  ACP_BRIDGE_MODEL              like --model
  OPENAI_BASE_URL               like --base-url
  DEEPSEEK_API_KEY              the key for DeepSeek
  OPENAI_API_KEY                the key for other endpoints, unless --api-key-env names another
  ACP_BRIDGE_PERMISSION_MODE    like --permission-mode
  ACP_BRIDGE_OFFER_BYPASS       like --offer-bypass (true or false)
  ACP_BRIDGE_SANDBOX            like --sandbox
  ACP_BRIDGE_TOOLS_MODE         like --tools-mode
  ACP_BRIDGE_MAX_TURN_REQUESTS  like --max-turn-requests
  ACP_BRIDGE_LOG_LEVEL          like --log-level
  ACP_BRIDGE_LOG_FILE           like --log-file
  ACP_BRIDGE_STATE_DIR          like --state-dir (empty: keep sessions in memory only)
  ACP_BRIDGE_TOKEN              serve: the bearer token clients must send (like --token-file)
  ACP_BRIDGE_SEARXNG_URL        like web.search.searxng

Config file (YAML; every key optional):
  model: deepseek/deepseek-chat      # provider/name, a model name, or script:FILE
  permission_mode: ask               # ask | accept-edits | plan | bypass
  offer_bypass: false                # offer bypass in the editor's mode picker
  tools:
    mode: native                     # native | code | both
  sandbox:
    mode: workspace-write            # workspace-write | read-only | off: how commands are confined
    network: false                   # let confined commands use the network
    escalate: false                  # in bypass mode, still offer to run a refused command outside
    writable: [~/.cache/go-build]    # more directories confined commands may write under
  providers:                         # in picker order; "deepseek" is built in
    deepseek:
      base_url: https://api.deepseek.com
      api_key_env: DEEPSEEK_API_KEY
      models:
        - name: deepseek-chat
          context_window: 128000     # tokens; the usage_update size
          max_tokens: 8192           # per response; 0 leaves it to the endpoint
          images: false              # the model accepts images
          price: {input: 0.27, cached_input: 0.07, output: 1.10, currency: USD}  # per million tokens
    ollama:
      base_url: http://localhost:11434/v1
      models: [{name: qwen3:8b, context_window: 32768}]
  limits:
    max_turn_requests: 50            # model requests in one prompt turn
    max_tokens: 0                    # default max_tokens for every model
    retries: 5                       # retries of a failed model request
    stream_idle_timeout: 2m          # a stream silent this long is retried
    compact_at: 80%                  # compact the older turns past this share of the context window (off: never by itself)
  log:
    level: info
    file: /tmp/acp-bridge.log
  web:
    search:                          # offers web_search; none: not offered
      searxng: http://localhost:8888 # a SearxNG instance with json in search.formats
      # brave_api_key_env: BRAVE_API_KEY   # or the Brave Search API, its key in this variable
`

var errVersion = errors.New("version")

// usageError is a mistake on the command line: its message is followed by
// one line saying where help is, not the whole help.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// printStartError prints a start-up error once, on stderr.
func printStartError(stderr io.Writer, name string, err error) {
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "Run '%s --help' for the flags and settings.\n", name)
	}
}

// parseFlags reads the flags and the environment and loads the config
// file. Flags and variables override the file. It prints nothing but
// --help (to stdout); the caller prints the error.
// extra adds a command's own flags (serve's, serve.go).
func parseFlags(name string, args []string, stdout io.Writer, extra ...func(*flag.FlagSet)) (*config, *flag.FlagSet, error) {
	var f struct {
		config, model, baseURL, apiKeyEnv, permissionMode, toolsMode, logLevel, logFile, stateDir string
		maxTurn, maxTokens, contextWindow, retries                                                int
		idle                                                                                      time.Duration
		images, version, offerBypass                                                              bool
		sandbox                                                                                   string
	}
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(io.Discard) // errors are printed once, by the caller
	fl.StringVar(&f.config, "config", "", "the YAML config file (env ACP_BRIDGE_CONFIG; default $XDG_CONFIG_HOME/acp-bridge/config.yaml, if it exists)")
	fl.StringVar(&f.model, "model", "", "the model: provider/name, a model name, or script:FILE to replay a scripted model (env ACP_BRIDGE_MODEL; default deepseek-chat)")
	fl.StringVar(&f.baseURL, "base-url", "", "an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (env OPENAI_BASE_URL; default https://api.deepseek.com)")
	fl.StringVar(&f.apiKeyEnv, "api-key-env", "", "the environment variable holding the API key (default DEEPSEEK_API_KEY for DeepSeek, else OPENAI_API_KEY)")
	fl.StringVar(&f.permissionMode, "permission-mode", "", "a new session's permission mode: ask, accept-edits, plan, bypass (env ACP_BRIDGE_PERMISSION_MODE; default ask)")
	fl.BoolVar(&f.offerBypass, "offer-bypass", false, "offer bypass in the editor's permission-mode picker (env ACP_BRIDGE_OFFER_BYPASS; default false: only /mode and --permission-mode reach it)")
	fl.StringVar(&f.sandbox, "sandbox", "", "how the commands the agent runs are confined: workspace-write, read-only, off (env ACP_BRIDGE_SANDBOX; default workspace-write)")
	fl.StringVar(&f.toolsMode, "tools-mode", "", "how tools are offered to the model: native, code, both (env ACP_BRIDGE_TOOLS_MODE; default native)")
	fl.IntVar(&f.maxTurn, "max-turn-requests", 0, "model requests allowed in one prompt turn (env ACP_BRIDGE_MAX_TURN_REQUESTS; default 50)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "max_tokens of each response (default: the endpoint's)")
	fl.IntVar(&f.contextWindow, "context-window", 0, "the model's context window in tokens, reported with usage (default 128000)")
	fl.BoolVar(&f.images, "images", false, "the model accepts images (advertises image prompts)")
	fl.IntVar(&f.retries, "retries", 0, "retries of a failed model request: 429, 5xx, dropped connections, stalled streams (default 5; 0: none)")
	fl.DurationVar(&f.idle, "stream-idle-timeout", 0, "a model endpoint silent this long is retried (default 2m)")
	fl.StringVar(&f.logLevel, "log-level", "", "log level: debug, info, warn, error (env ACP_BRIDGE_LOG_LEVEL; default info, or warn when stderr is not a terminal and there is no --log-file)")
	fl.StringVar(&f.logFile, "log-file", "", "append logs to this file instead of stderr (env ACP_BRIDGE_LOG_FILE)")
	fl.StringVar(&f.stateDir, "state-dir", "", "where session logs are kept, for session/load, resume and list; empty keeps sessions in memory only (env ACP_BRIDGE_STATE_DIR; default $XDG_STATE_HOME/acp-bridge/sessions)")
	fl.BoolVar(&f.version, "version", false, "print the version and exit")
	for _, add := range extra {
		add(fl)
	}
	fl.Usage = func() {}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fl.SetOutput(stdout)
			fl.PrintDefaults()
			fmt.Fprint(stdout, usageMore)
			return nil, nil, err
		}
		return nil, nil, usageError{err}
	}
	if f.version {
		return nil, fl, errVersion
	}
	if fl.NArg() > 0 {
		return nil, nil, usageError{fmt.Errorf("unexpected argument %q", fl.Arg(0))}
	}
	set := map[string]bool{}
	fl.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, n := range []struct {
		name string
		v    int
	}{{"max-turn-requests", f.maxTurn}, {"max-tokens", f.maxTokens}, {"context-window", f.contextWindow}, {"retries", f.retries}} {
		if set[n.name] && n.v < 0 {
			return nil, nil, usageError{fmt.Errorf("--%s must be 0 or more, not %d", n.name, n.v)}
		}
	}
	if set["max-turn-requests"] && f.maxTurn == 0 {
		return nil, nil, usageError{errors.New("--max-turn-requests must be at least 1")}
	}
	if set["stream-idle-timeout"] && f.idle <= 0 {
		return nil, nil, usageError{fmt.Errorf("--stream-idle-timeout must be positive, not %s", f.idle)}
	}
	if set["base-url"] {
		if err := checkURL(f.baseURL); err != nil {
			return nil, nil, usageError{fmt.Errorf("--base-url %q %v", f.baseURL, err)}
		}
	}

	cfg := &config{permissionMode: agent.ModeAsk, toolsMode: "native", maxTurn: 50, retries: 5, stateDir: defaultStateDir()}

	// The file.
	path, explicit := f.config, f.config != ""
	if !explicit {
		path, explicit = os.Getenv("ACP_BRIDGE_CONFIG"), os.Getenv("ACP_BRIDGE_CONFIG") != ""
	}
	if !explicit {
		path = defaultConfigPath()
	}
	if path != "" {
		if err := cfg.loadFile(path, explicit); err != nil {
			return nil, nil, err
		}
	}

	// The environment.
	envStr := func(dst *string, name string) {
		if v := os.Getenv(name); v != "" {
			*dst = v
		}
	}
	if v := os.Getenv("ACP_BRIDGE_MODEL"); v != "" {
		cfg.model, cfg.modelSet, cfg.modelFrom = v, true, "ACP_BRIDGE_MODEL"
	}
	if v := os.Getenv(model.OpenAIBaseURLEnv); v != "" {
		if err := checkURL(v); err != nil {
			return nil, nil, fmt.Errorf("%s=%q %v", model.OpenAIBaseURLEnv, v, err)
		}
		cfg.baseURL, cfg.baseURLFrom = v, model.OpenAIBaseURLEnv
	}
	envStr(&cfg.permissionMode, "ACP_BRIDGE_PERMISSION_MODE")
	envStr(&cfg.toolsMode, "ACP_BRIDGE_TOOLS_MODE")
	envStr(&cfg.logLevel, "ACP_BRIDGE_LOG_LEVEL")
	envStr(&cfg.logFile, "ACP_BRIDGE_LOG_FILE")
	if v := os.Getenv("ACP_BRIDGE_SEARXNG_URL"); v != "" {
		if err := checkURL(v); err != nil {
			return nil, nil, fmt.Errorf("ACP_BRIDGE_SEARXNG_URL=%q %v", v, err)
		}
		cfg.web.Search.SearxNG, cfg.web.Search.BraveAPIKeyEnv = v, ""
	}
	if v, ok := os.LookupEnv("ACP_BRIDGE_STATE_DIR"); ok {
		cfg.stateDir = v // an explicitly empty value turns saving off
	}
	if v := os.Getenv("ACP_BRIDGE_SANDBOX"); v != "" {
		if err := cfg.sandbox.setMode(v, "ACP_BRIDGE_SANDBOX"); err != nil {
			return nil, nil, err
		}
	}
	if set["sandbox"] {
		if err := cfg.sandbox.setMode(f.sandbox, "--sandbox"); err != nil {
			return nil, nil, usageError{err}
		}
	}
	if v := os.Getenv("ACP_BRIDGE_OFFER_BYPASS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, nil, fmt.Errorf("ACP_BRIDGE_OFFER_BYPASS=%q is not true or false", v)
		}
		cfg.offerBypass = b
	}
	if v := os.Getenv("ACP_BRIDGE_MAX_TURN_REQUESTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, nil, fmt.Errorf("ACP_BRIDGE_MAX_TURN_REQUESTS=%q must be a whole number of at least 1", v)
		}
		cfg.maxTurn = n
	}

	// The flags.
	if set["model"] {
		cfg.model, cfg.modelSet, cfg.modelFrom = f.model, true, "--model"
	}
	if set["base-url"] {
		cfg.baseURL, cfg.baseURLFrom = f.baseURL, "--base-url"
	}
	if set["api-key-env"] {
		cfg.apiKeyEnv = f.apiKeyEnv
	}
	if set["permission-mode"] {
		cfg.permissionMode = f.permissionMode
	}
	if set["offer-bypass"] {
		cfg.offerBypass = f.offerBypass
	}
	if set["tools-mode"] {
		cfg.toolsMode = f.toolsMode
	}
	if set["state-dir"] {
		cfg.stateDir = f.stateDir
	}
	if set["max-turn-requests"] {
		cfg.maxTurn = f.maxTurn
	}
	if set["max-tokens"] {
		cfg.maxTokens, cfg.maxTokensFlag = f.maxTokens, true
	}
	if set["context-window"] {
		cfg.contextWindow = f.contextWindow
	}
	if set["images"] {
		cfg.images, cfg.imagesSet = f.images, true
	}
	if set["retries"] {
		cfg.retries = f.retries
	}
	if set["stream-idle-timeout"] {
		cfg.streamIdleTimeout = f.idle
	}
	if set["log-level"] {
		cfg.logLevel = f.logLevel
	}
	if set["log-file"] {
		cfg.logFile = f.logFile
	}
	if err := cfg.check(); err != nil {
		return nil, nil, err
	}
	return cfg, fl, nil
}

// checkURL says what is wrong with an endpoint URL, nil when nothing is.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("is not an http(s) URL (e.g. http://localhost:11434/v1)")
	}
	return nil
}

func defaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "acp-bridge", "config.yaml")
}

// loadFile applies the config file. A missing default file is no error; a
// missing file that was asked for is. Errors name the file, the line and
// the key, in the file's own terms.
func (c *config) loadFile(path string, explicit bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("config file: %w", err)
	}
	c.configPath = path
	bad := func(format string, args ...any) error {
		return fmt.Errorf("config file %s: %s", path, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return bad("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil // empty, or only comments
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return bad("line %d: expected a mapping of settings (key: value)", root.Line)
	}
	if err := checkKeys(root, reflect.TypeOf(fileConfig{}), ""); err != nil {
		return bad("%v", err)
	}
	var fc fileConfig
	if err := root.Decode(&fc); err != nil {
		return bad("%s", yamlTypeError(root, err))
	}
	if fc.Model != "" {
		c.model, c.modelSet, c.modelFrom = fc.Model, true, "the config file"
	}
	if fc.PermissionMode != "" {
		c.permissionMode = fc.PermissionMode
	}
	if fc.Tools.Mode != "" {
		c.toolsMode = fc.Tools.Mode
	}
	if fc.Limits.MaxTurnRequests < 0 || fc.Limits.MaxTokens < 0 || (fc.Limits.Retries != nil && *fc.Limits.Retries < 0) {
		return bad("limits: max_turn_requests, max_tokens and retries must be 0 or more")
	}
	if fc.Limits.MaxTurnRequests != 0 {
		c.maxTurn = fc.Limits.MaxTurnRequests
	}
	if fc.Limits.MaxTokens != 0 {
		c.maxTokens = fc.Limits.MaxTokens
	}
	if fc.Limits.Retries != nil {
		c.retries = *fc.Limits.Retries
	}
	if v := fc.Limits.CompactAt; v != "" {
		at, err := parseCompactAt(v)
		if err != nil {
			return fmt.Errorf("config file %s: limits.compact_at: %w", path, err)
		}
		c.compactAt = at
	}
	if fc.Limits.StreamIdleTimeout != "" {
		d, err := time.ParseDuration(fc.Limits.StreamIdleTimeout)
		if err != nil || d <= 0 {
			return bad("limits.stream_idle_timeout: %q is not a positive duration (e.g. 90s, 2m)", fc.Limits.StreamIdleTimeout)
		}
		c.streamIdleTimeout = d
	}
	if fc.OfferBypass {
		c.offerBypass = true
	}
	if fc.Sandbox.Mode != "" {
		if err := c.sandbox.setMode(fc.Sandbox.Mode, "sandbox.mode"); err != nil {
			return bad("%v", err)
		}
	}
	c.sandbox.Network, c.sandbox.Escalate, c.sandbox.Writable = fc.Sandbox.Network, fc.Sandbox.Escalate, fc.Sandbox.Writable
	if fc.Log.Level != "" {
		c.logLevel = fc.Log.Level
	}
	if fc.Log.File != "" {
		c.logFile = fc.Log.File
	}
	sec := settings.Section{Permissions: fc.Permissions, Hooks: fc.Hooks, Timeouts: fc.Timeouts}
	pol, errs := sec.Compile(rules.Source{Kind: "user", Path: path}, "")
	if len(errs) > 0 {
		return bad("%v", errors.Join(errs...))
	}
	c.policy = pol
	if err := fc.Web.check(); err != nil {
		return bad("%v", err)
	}
	c.web = fc.Web
	if fc.Providers.Kind != 0 {
		if fc.Providers.Kind != yaml.MappingNode {
			return bad("line %d: providers must be a mapping of name to provider", fc.Providers.Line)
		}
		for i := 0; i+1 < len(fc.Providers.Content); i += 2 {
			var p providerConfig
			if err := fc.Providers.Content[i+1].Decode(&p); err != nil {
				return bad("%s", yamlTypeError(root, err))
			}
			p.Name = fc.Providers.Content[i].Value
			if strings.Contains(p.Name, "/") || p.Name == "" {
				return bad("line %d: provider name %q must be non-empty and without '/'", fc.Providers.Content[i].Line, p.Name)
			}
			if p.BaseURL != "" {
				if err := checkURL(p.BaseURL); err != nil {
					return bad("providers.%s.base_url %q %v", p.Name, p.BaseURL, err)
				}
			}
			for j, m := range p.Models {
				if m.Name == "" {
					return bad("providers.%s.models[%d] has no name", p.Name, j)
				}
				if m.ContextWindow < 0 || m.MaxTokens < 0 {
					return bad("providers.%s.models[%d]: context_window and max_tokens must be 0 or more", p.Name, j)
				}
			}
			c.providers = append(c.providers, p)
		}
	}
	return nil
}

// misplacedKeys says where settings people put at the top level belong.
var misplacedKeys = map[string]string{
	"tools_mode":          "tools: {mode: native|code|both}",
	"log_level":           "log: {level: …}",
	"log_file":            "log: {file: …}",
	"retries":             "limits: {retries: …}",
	"max_tokens":          "limits: {max_tokens: …}",
	"max_turn_requests":   "limits: {max_turn_requests: …}",
	"stream_idle_timeout": "limits: {stream_idle_timeout: …}",
	"base_url":            "providers: {NAME: {base_url: …}}",
	"api_key_env":         "providers: {NAME: {api_key_env: …}}",
	"context_window":      "providers: {NAME: {models: [{name: …, context_window: …}]}}",
	"models":              "providers: {NAME: {models: […]}}",
}

// checkKeys refuses keys the settings do not have, naming the key, its
// line and the keys that are allowed there.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t == reflect.TypeOf(yaml.Node{}) {
		// providers: a mapping of names to providers.
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if err := checkKeys(n.Content[i+1], reflect.TypeOf(providerConfig{}), path+"."+n.Content[i].Value); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	if n.Kind == yaml.SequenceNode {
		for i, item := range n.Content {
			if err := checkKeys(item, t, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil // a type mismatch, reported by the decoder
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
		names = append(names, name)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ft, ok := fields[k.Value]
		where := strings.TrimPrefix(path+"."+k.Value, ".")
		if !ok {
			msg := fmt.Sprintf("line %d: unknown key %q", k.Line, where)
			if hint, ok := misplacedKeys[k.Value]; ok && path == "" {
				return fmt.Errorf("%s: it is set as %s", msg, hint)
			}
			return fmt.Errorf("%s (known here: %s)", msg, strings.Join(names, ", "))
		}
		if err := checkKeys(n.Content[i+1], ft, where); err != nil {
			return err
		}
	}
	return nil
}

// yamlLineErr is compiled at first use, off the start-up path.
var yamlLineErr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^line (\d+): cannot unmarshal !!(\w+) ` + "`" + `?(.*?)` + "`" + `? into (\S+)$`)
})

// yamlTypeError rewrites the YAML decoder's type errors ("line 4: cannot
// unmarshal !!str `abc` into int") in the file's terms: the key and what
// it expects, never a Go type.
func yamlTypeError(root *yaml.Node, err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	var out []string
	for _, e := range te.Errors {
		m := yamlLineErr().FindStringSubmatch(e)
		if m == nil {
			out = append(out, e)
			continue
		}
		line, _ := strconv.Atoi(m[1])
		key := keyAtLine(root, line, "")
		if key == "" {
			key = "a value"
		}
		got := m[3]
		if got == "" {
			got = map[string]string{"map": "a mapping", "seq": "a list"}[m[2]]
		} else {
			got = strconv.Quote(got)
		}
		out = append(out, fmt.Sprintf("line %d: %s should be %s, not %s", line, key, expected(m[4]), got))
	}
	return strings.Join(out, "; ")
}

func expected(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "text"
	}
	return "a mapping"
}

// keyAtLine is the dotted key whose value starts at line.
func keyAtLine(n *yaml.Node, line int, path string) string {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := strings.TrimPrefix(path+"."+n.Content[i].Value, ".")
			v := n.Content[i+1]
			if v.Line == line && (v.Kind == yaml.ScalarNode || n.Content[i].Line == line) {
				if v.Kind == yaml.ScalarNode || v.Kind == yaml.AliasNode {
					return p
				}
				if k := keyAtLine(v, line, p); k != "" {
					return k
				}
				return p
			}
			if k := keyAtLine(v, line, p); k != "" {
				return k
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if item.Line == line && item.Kind == yaml.ScalarNode {
				return p
			}
			if k := keyAtLine(item, line, p); k != "" {
				return k
			}
		}
	}
	return ""
}

func (c *config) check() error {
	if !agent.ValidMode(c.permissionMode) {
		return fmt.Errorf("unknown permission mode %q (use ask, accept-edits, plan or bypass)", c.permissionMode)
	}
	switch c.toolsMode {
	case "native", "code", "both":
	default:
		return fmt.Errorf("unknown tools mode %q (use native, code or both)", c.toolsMode)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); c.logLevel != "" && err != nil {
		return fmt.Errorf("unknown log level %q (use debug, info, warn or error)", c.logLevel)
	}
	return nil
}

// builtinDeepSeek is the provider used unless the config file redefines it.
func (c *config) builtinDeepSeek() providerConfig {
	p := providerConfig{Name: "deepseek", BaseURL: model.DeepSeekBaseURL, APIKeyEnv: model.DeepSeekKeyEnv,
		Models: []modelConfig{
			// deepseek-chat stops at 4096 output tokens unless asked for more;
			// 8192 is its ceiling. A coding agent writes whole files.
			{Name: "deepseek-chat", ContextWindow: 128000, MaxTokens: 8192},
			{Name: "deepseek-reasoner", ContextWindow: 128000},
		}}
	if c.maxTokens != 0 {
		p.Models[0].MaxTokens = 0 // limits.max_tokens or --max-tokens decides
	}
	return p
}

func isDeepSeek(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.deepseek.com")
}

// hosted endpoints always need a key; local servers usually do not.
func isHosted(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Hostname()) {
	case "api.deepseek.com", "api.openai.com":
		return true
	}
	return false
}

// catalog resolves the providers and models a session may choose from, and
// the default one. A --base-url endpoint comes first.
func (c *config) catalog() (provs []providerConfig, defaultID string, err error) {
	provs = append(provs, c.providers...)
	// The built-in DeepSeek models are offered unless another endpoint was
	// named: a local server's user has no DeepSeek key.
	if !containsProvider(provs, "deepseek") && (c.baseURL == "" || isDeepSeek(c.baseURL)) {
		provs = append(provs, c.builtinDeepSeek())
	}
	name, modelName := "", c.model
	if p, m, ok := strings.Cut(c.model, "/"); ok && containsProvider(provs, p) {
		name, modelName = p, m
	}
	if c.baseURL != "" {
		ep := providerConfig{Name: "endpoint", BaseURL: c.baseURL}
		switch {
		case isDeepSeek(c.baseURL):
			ep = c.builtinDeepSeek()
			ep.BaseURL = c.baseURL
		case strings.EqualFold(hostOf(c.baseURL), "api.openai.com"):
			ep.Name = "openai"
		}
		if !c.modelSet && !isDeepSeek(c.baseURL) {
			return nil, "", fmt.Errorf("%s is set to %s, but no model is named: set --model or ACP_BRIDGE_MODEL to the model to ask for there", c.baseURLFrom, c.baseURL)
		}
		provs = append([]providerConfig{ep}, removeProvider(provs, ep.Name)...)
		if name == "" {
			name = ep.Name
		}
	}
	if c.apiKeyEnv != "" {
		// The flag names the key of the endpoint being configured: the
		// --base-url one, or the default provider.
		target := name
		if target == "" {
			target = provs[0].Name
		}
		for i := range provs {
			if provs[i].Name == target {
				provs[i].APIKeyEnv = c.apiKeyEnv
			}
		}
	}
	if modelName == "" {
		modelName = model.DeepSeekModel
		if name == "" {
			name = provs[0].Name
		}
		if p := findProvider(provs, name); p != nil && len(p.Models) > 0 && !isDeepSeek(p.BaseURL) {
			modelName = p.Models[0].Name
		}
	}
	if name == "" {
		// A bare model name: the first provider that lists it, else the first provider.
		for _, p := range provs {
			for _, m := range p.Models {
				if m.Name == modelName && name == "" {
					name = p.Name
				}
			}
		}
		if name == "" {
			name = provs[0].Name
		}
	}
	p := findProvider(provs, name)
	if !containsModel(p.Models, modelName) {
		p.Models = append([]modelConfig{{Name: modelName}}, p.Models...)
	}
	return provs, name + "/" + modelName, nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func containsProvider(ps []providerConfig, name string) bool { return findProvider(ps, name) != nil }

func findProvider(ps []providerConfig, name string) *providerConfig {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

func removeProvider(ps []providerConfig, name string) []providerConfig {
	var out []providerConfig
	for _, p := range ps {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}

func containsModel(ms []modelConfig, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}

// modelChoices builds the providers. The key variable defaults to
// DEEPSEEK_API_KEY for DeepSeek and OPENAI_API_KEY elsewhere.
func (c *config) modelChoices() ([]agent.ModelChoice, string, error) {
	if strings.HasPrefix(c.model, "script:") {
		s, err := model.LoadScript(strings.TrimPrefix(c.model, "script:"))
		if err != nil {
			return nil, "", err
		}
		id := "script:" + filepath.Base(strings.TrimPrefix(c.model, "script:"))
		return []agent.ModelChoice{{ID: id, Name: id, Description: "a scripted model replaying " + strings.TrimPrefix(c.model, "script:"),
			Provider: s, ContextWindow: c.contextWindow, Images: c.images}}, id, nil
	}
	provs, def, err := c.catalog()
	if err != nil {
		return nil, "", err
	}
	c.resolved = provs
	c.routes = newRoutes(provs, def)
	var out []agent.ModelChoice
	for _, p := range provs {
		for _, m := range p.Models {
			choice, err := c.choice(p, m, def)
			if err != nil {
				return nil, "", err
			}
			out = append(out, choice)
		}
	}
	return out, def, nil
}

// keyEnv is the variable a provider's key is read from.
func (p providerConfig) keyEnv() string {
	switch {
	case p.APIKeyEnv != "":
		return p.APIKeyEnv
	case isDeepSeek(p.BaseURL):
		return model.DeepSeekKeyEnv
	}
	return model.OpenAIKeyEnv
}

// choice is one model of one provider, as the picker offers it.
func (c *config) choice(p providerConfig, m modelConfig, def string) (agent.ModelChoice, error) {
	id := p.Name + "/" + m.Name
	if id == def {
		// Flags describe the model being chosen.
		if c.contextWindow > 0 {
			m.ContextWindow = c.contextWindow
		}
		if c.imagesSet {
			m.Images = c.images
		}
		if c.maxTokensFlag {
			m.MaxTokens = c.maxTokens
		}
	}
	maxTokens := m.MaxTokens
	if maxTokens == 0 {
		maxTokens = c.maxTokens
	}
	keyEnv := p.keyEnv()
	prov, err := model.NewOpenAI(model.OpenAIOptions{
		BaseURL: p.BaseURL, Model: m.Name, APIKey: apiKey(keyEnv, p.BaseURL), APIKeyEnv: keyEnv,
		RequireKey: isHosted(p.BaseURL) || p.APIKeyEnv != "", MaxTokens: maxTokens,
		ContextWindow: m.ContextWindow, Images: m.Images, IdleTimeout: c.streamIdleTimeout,
	})
	if err != nil {
		return agent.ModelChoice{}, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	name := m.DisplayName
	if name == "" {
		name = m.Name
	}
	var routed model.Provider = prov
	if c.routes != nil {
		// The one place a request's endpoint is decided: the configured
		// one, or where the editor routed this provider (providers.go).
		routed = c.routes.Provider(p.Name, m.Name, prov, func(name string, r route.Route) (model.Provider, error) {
			return model.NewOpenAI(model.OpenAIOptions{BaseURL: r.BaseURL, Model: name, Headers: r.Headers, MaxTokens: maxTokens,
				ContextWindow: m.ContextWindow, Images: m.Images, IdleTimeout: c.streamIdleTimeout})
		})
	}
	choice := agent.ModelChoice{ID: id, Name: name, Description: p.Name + " at " + p.BaseURL,
		Provider: model.Retry(routed, model.RetryOptions{Retries: retriesOption(c.retries)}), ContextWindow: m.ContextWindow, Images: m.Images,
		ReasoningEfforts: model.ReasoningEfforts(m.Name)}
	if m.Price != nil {
		choice.Price = &agent.Price{Input: m.Price.Input, CachedInput: m.Price.CachedInput, Output: m.Price.Output, Currency: m.Price.Currency}
	}
	return choice, nil
}

// Discovery of the endpoint's models: asked once at start, in the
// background, and offered only if it answers quickly; a server that does
// not is no worse off than one without the list.
const (
	discoverTimeout = 1500 * time.Millisecond
	maxDiscovered   = 100 // OpenRouter lists hundreds; a picker that long helps nobody
)

// discoverModels starts asking the --base-url endpoint for its models and
// returns what it learnt so far, as more choices beside known.
func (c *config) discoverModels(known []agent.ModelChoice, logger *slog.Logger) func() []agent.ModelChoice {
	if c.baseURL == "" || strings.HasPrefix(c.model, "script:") {
		return nil
	}
	provs, def, err := c.catalog()
	if err != nil || len(provs) == 0 {
		return nil
	}
	ep := provs[0] // the --base-url endpoint comes first
	var found atomic.Pointer[[]agent.ModelChoice]
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), discoverTimeout)
		defer cancel()
		names, err := model.ListModels(ctx, ep.BaseURL, os.Getenv(ep.keyEnv()), nil)
		if err != nil {
			logger.Debug("the endpoint's model list is not available", "url", ep.BaseURL, "err", err.Error())
			return
		}
		var more []agent.ModelChoice
		for _, n := range names {
			id := ep.Name + "/" + n
			if len(more) == maxDiscovered || slices.ContainsFunc(known, func(m agent.ModelChoice) bool { return m.ID == id }) {
				continue
			}
			ch, err := c.choice(ep, modelConfig{Name: n}, def)
			if err == nil {
				more = append(more, ch)
			}
		}
		logger.Info("models listed by the endpoint", "url", ep.BaseURL, "models", len(names), "offered", len(more))
		found.Store(&more)
	}()
	return func() []agent.ModelChoice {
		if p := found.Load(); p != nil {
			return *p
		}
		return nil
	}
}

// retriesOption maps the setting (0 or -1: none) to model.RetryOptions,
// where 0 means the default.
func retriesOption(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// parseCompactAt reads limits.compact_at: a share of the context window
// ("80%" or 0.8), or "off".
func parseCompactAt(v string) (float64, error) {
	v = strings.TrimSpace(v)
	if v == "off" {
		return -1, nil
	}
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a share of the window (like 80%%, 0.8 or off)", v)
	}
	if pct {
		f /= 100
	}
	if f <= 0 || f > 1 {
		return 0, fmt.Errorf("%q is outside (0, 100%%]", v)
	}
	return f, nil
}
