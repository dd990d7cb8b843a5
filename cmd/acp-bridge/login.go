package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/internal/credentials"
	"github.com/acp-bridge/acp-bridge/model"
)

// loginMethod is the terminal auth method: the editor runs `acp-bridge
// login` in a terminal, then starts the bridge again, which reads the key
// the login stored. Clients of the older _meta convention (Zed's
// "terminal-auth") are given the command to run; type "terminal" wins for
// the others.
func loginMethod() *acp.AuthMethod {
	m := &acp.AuthMethod{
		ID: "login", Name: "Log in with an API key", Type: "terminal", Args: []string{"login"},
		Description: "Store an API key for DeepSeek or an OpenAI-compatible endpoint",
	}
	if exe, err := os.Executable(); err == nil {
		m.Meta = acp.Meta{"terminal-auth": map[string]any{"label": "acp-bridge login", "command": exe, "args": []string{"login"}}}
	}
	return m
}

// apiKey is the key for an endpoint: the environment's (it wins), else the
// one `acp-bridge login` stored for its base URL.
func apiKey(env, baseURL string) string {
	key, _ := keySource(env, baseURL)
	return key
}

// keySource is the key for an endpoint and where it came from, for doctor
// ("" when there is none). The key itself is never printed.
func keySource(env, baseURL string) (key, source string) {
	if k := os.Getenv(env); k != "" {
		return k, "the environment variable " + env
	}
	st := credentials.Default()
	if k, err := st.Key(baseURL); err == nil && k != "" {
		return k, "acp-bridge login (" + st.Path + ")"
	}
	return "", ""
}

func logout(context.Context) error {
	_, err := credentials.Default().Remove()
	return err
}

// runLogin asks for the provider and the key, checks the key against the
// endpoint's /models and stores it. The key is read without echo when stdin
// is a terminal, and never printed or logged.
func runLogin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("acp-bridge login", flag.ContinueOnError)
	fl.SetOutput(stderr)
	baseURL := fl.String("base-url", "", "the OpenAI-compatible endpoint to log in to (default: ask; Enter for DeepSeek)")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "Usage: acp-bridge login [--base-url URL]\n\nStores an API key for DeepSeek or an OpenAI-compatible endpoint in %s\n(readable by you only). A key in the environment wins over it.\n\n", credentials.Default().Path)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	in := bufio.NewReader(stdin)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "acp-bridge login: "+format+"\n", a...)
		return 1
	}
	base := *baseURL
	if base == "" {
		fmt.Fprint(stdout, "Provider: press Enter for DeepSeek, or type an OpenAI-compatible base URL\n(for example https://api.openai.com/v1 or http://localhost:11434/v1): ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return fail("no provider given")
		}
		base = strings.TrimSpace(line)
	}
	base, err := providerURL(base)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(stdout, "API key for %s (not shown): ", base)
	key, err := readSecret(stdin, in)
	fmt.Fprintln(stdout)
	if err != nil {
		return fail("reading the key: %v", err)
	}
	if key == "" {
		return fail("no key given; nothing stored")
	}
	fmt.Fprintf(stdout, "Checking the key at %s/models ... ", base)
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	models, err := listModels(cctx, base, key)
	if err != nil {
		fmt.Fprintln(stdout, "failed")
		return fail("%v; nothing stored", err)
	}
	fmt.Fprintf(stdout, "ok (%s)\n", modelSummary(models))
	st := credentials.Default()
	if err := st.Save(base, key); err != nil {
		return fail("storing the key: %v", err)
	}
	fmt.Fprintf(stdout, "Stored in %s (readable by you only). Remove it with: acp-bridge logout\n", st.Path)
	env := model.OpenAIKeyEnv
	if isDeepSeek(base) {
		env = model.DeepSeekKeyEnv
	} else {
		fmt.Fprintf(stdout, "To use this endpoint, start acp-bridge with --base-url %s --model NAME,\nor give it a provider in the config file (base_url: %s).\n", base, base)
	}
	if os.Getenv(env) != "" {
		fmt.Fprintf(stdout, "Note: %s is set in this environment, and a key in the environment wins over the stored one.\n", env)
	}
	return 0
}

// providerURL turns the provider answer into a base URL: empty or
// "deepseek" is DeepSeek's.
func providerURL(s string) (string, error) {
	if s == "" || strings.EqualFold(s, "deepseek") {
		return model.DeepSeekBaseURL, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not a base URL: give one like https://api.openai.com/v1, or press Enter for DeepSeek", s)
	}
	return credentials.Normalize(s), nil
}

// readSecret reads one line without echo from a terminal, or plainly from
// a pipe (scripts, tests).
func readSecret(stdin io.Reader, in *bufio.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) && in.Buffered() == 0 {
		b, err := term.ReadPassword(int(f.Fd()))
		return strings.TrimSpace(string(b)), err
	}
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// listModels asks an OpenAI-compatible endpoint for its models with key,
// which proves the endpoint answers and takes the key.
func listModels(ctx context.Context, base, key string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s does not answer: %v", base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%s rejected the key (HTTP %d): check it", base, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("%s/models answered HTTP %d: is it an OpenAI-compatible base URL?", base, resp.StatusCode)
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s/models did not answer with a model list: is it an OpenAI-compatible base URL?", base)
	}
	ids := make([]string, 0, len(body.Data))
	for _, d := range body.Data {
		ids = append(ids, d.ID)
	}
	return ids, nil
}

// unwrapURLError drops the "Get URL:" prefix the URL is already named in.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func modelSummary(ids []string) string {
	const show = 5
	switch {
	case len(ids) == 0:
		return "no models listed"
	case len(ids) <= show:
		return fmt.Sprintf("%d models: %s", len(ids), strings.Join(ids, ", "))
	}
	return fmt.Sprintf("%d models: %s, ...", len(ids), strings.Join(ids[:show], ", "))
}

func runLogout(stdout, stderr io.Writer) int {
	st := credentials.Default()
	ok, err := st.Remove()
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "acp-bridge logout: %v\n", err)
		return 1
	case ok:
		fmt.Fprintf(stdout, "Removed the stored keys (%s).\n", st.Path)
	default:
		fmt.Fprintln(stdout, "No stored keys to remove.")
	}
	if os.Getenv(model.DeepSeekKeyEnv) != "" || os.Getenv(model.OpenAIKeyEnv) != "" {
		fmt.Fprintln(stdout, "Keys in the environment (DEEPSEEK_API_KEY, OPENAI_API_KEY) still work: unset them to log out fully.")
	}
	return 0
}
