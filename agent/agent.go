// Package agent is the ACP agent: sessions, the prompt turn loop,
// cancellation and stop reasons, and permission decisions. It appends what
// happens to each session's log, folds every event into the session's state
// (state.go: apply is the state's only writer, live and on load alike), and
// sends what package mapping makes of it; it never formats a wire message by
// hand. docs/DESIGN.md describes the whole.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/model/catalog"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
	"github.com/acp-bridge/acp-bridge/settings"
)

// Options configure an Agent. Zero values take the documented defaults.
type Options struct {
	Name    string // agentInfo.name; default "acp-bridge"
	Version string // agentInfo.version; default "dev"

	Registry *registry.Registry // the global tools; default: none
	Model    model.Provider     // nil: prompts answer how to configure one
	// ModelHint is shown when Model is nil, e.g. the flag to set.
	ModelHint string

	// ModelName names Model in the model picker when Models is empty.
	ModelName string
	// Models are the models a session may choose (config option "model",
	// /model); the first, or DefaultModel, is the default. Empty: Model alone.
	Models       []ModelChoice
	DefaultModel string
	// MoreModels, if set, adds models learnt after start (an endpoint's
	// /models list) to Models; it is called whenever the list is needed.
	MoreModels func() []ModelChoice
	// Routes is where each provider's requests go, which the client may
	// change (providers/*, providers.go); nil: not offered.
	Routes Routes
	// Sandbox confines the commands the agent runs (agent/sandbox.go);
	// nil: they run as they are, and no sandbox option is offered.
	Sandbox *Sandbox
	// PermissionMode is a new session's mode: ask (default), accept-edits, plan, bypass.
	PermissionMode string
	// OfferBypass offers bypass among the choices of the mode picker (the
	// legacy modes and the mode config option). Zed saves the last value
	// picked and re-applies it to every new, loaded and resumed session, so
	// one pick of an offered bypass would make it the default for good;
	// without the opt-in bypass is reached by /mode and PermissionMode only.
	OfferBypass bool
	// MCPStartTimeout bounds how long session/new waits for the session's
	// MCP servers (default 5s); slower ones join when ready.
	MCPStartTimeout time.Duration

	// MaxTurnRequests bounds model requests in one turn (default 50); past
	// it the turn ends with stopReason max_turn_requests.
	MaxTurnRequests int

	// ToolsMode is how new sessions offer tools: native (default), code
	// (run_code only) or both; each session may change it (tools_mode option).
	ToolsMode codemode.Mode
	// Policy is the user's permission rules, hooks and tool timeouts (their
	// config file; settings.Section.Compile). The zero value: none.
	Policy settings.Policy
	// Settings keeps what the bridge remembers per project for the user:
	// "always allow" answers as rules, and which project settings files
	// the user trusted. nil: answers last for the session, and a project's
	// allow rules and hooks never apply (its deny and ask rules do).
	Settings *settings.Store
	// CodeMode configures run_code (limits, value mapping); nil: defaults.
	CodeMode *codemode.Options
	// Store keeps sessions across processes (session/load, resume, list,
	// delete). nil: sessions live in memory only and those are not offered.
	Store *session.Store
	// SweepTempFiles removes what bridges that are gone left in the
	// workspace (the temporary files of edits a kill interrupted); it is
	// called when a stored session is opened (load, resume), so one a
	// bridge killed while this one ran goes with the next load. nil: none.
	SweepTempFiles func()
	// ListPageSize is how many sessions one session/list page holds (default 50).
	ListPageSize int

	// UserInstructionsDir holds the user-wide AGENTS.md; "" is
	// $XDG_CONFIG_HOME/acp-bridge (~/.config/acp-bridge), "-" none.
	UserInstructionsDir string
	// UserProfilesDir holds the user's subagent profiles; "" is the agents
	// directory beside the user-wide AGENTS.md, "-" none. A project's are
	// in its ProjectProfilesDir.
	UserProfilesDir string
	// MaxInstructionBytes caps each AGENTS.md in the prompt (default 32 KiB).
	MaxInstructionBytes int
	// CompactThreshold is the share of the model's context window a request
	// may fill before the older turns are compacted (default 0.8; negative:
	// never compact by itself, /compact still works).
	CompactThreshold float64
	// TerminalLogin is the terminal auth method offered to clients that
	// can run one (clientCapabilities.auth.terminal, or the older
	// _meta["terminal-auth"], for which its Meta is kept); nil: none.
	TerminalLogin *acp.AuthMethod
	// Logout removes the stored credentials (the logout method, advertised
	// when set).
	Logout func(context.Context) error

	Logger *slog.Logger
	Now    func() time.Time // default time.Now
	NewID  func() string    // session ids; default random
	// CheckDir says why a session's cwd cannot be used (nil: it can);
	// default: it must be an existing directory. Tests with a workspace
	// that lives only in the editor replace it.
	CheckDir func(path string) error
}

// Agent serves one ACP connection. It implements acp.Agent.
type Agent struct {
	o      Options
	client acp.Client
	log    *slog.Logger
	models catalog.Catalog // the models offered, from o (model/catalog)

	mu       sync.Mutex
	caps     acp.ClientCapabilities
	info     *acp.Implementation // the client's clientInfo, nil when it sent none
	v2       bool                // the connection speaks ACP v2 (dialect.go)
	sessions map[string]*conversation
	moved    map[string]bool // sessions handed over to another process (handover.go)
	shutdown bool            // no sessions after Shutdown: their servers would outlive it
}

var (
	_ acp.Agent         = (*Agent)(nil)
	_ acp.SessionCloser = (*Agent)(nil)
)

// New returns an agent that talks to client.
func New(client acp.Client, o Options) *Agent {
	if o.Name == "" {
		o.Name = "acp-bridge"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Registry == nil {
		o.Registry = registry.New()
	}
	if o.MaxTurnRequests <= 0 {
		o.MaxTurnRequests = 50
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = randomID
	}
	return &Agent{o: o, client: client, log: o.Logger, sessions: map[string]*conversation{},
		models: catalog.Catalog{Fixed: o.Models, More: o.MoreModels, Lone: o.Model, LoneName: o.ModelName}}
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Initialize negotiates the version and states what this agent can do. It
// advertises only what works.
func (a *Agent) Initialize(ctx context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	if req.ProtocolVersion < 0 || req.ProtocolVersion > 65535 {
		return nil, acp.InvalidParams("invalid params: protocolVersion must be between 0 and 65535")
	}
	a.mu.Lock()
	a.caps, a.info = req.ClientCapabilities, req.ClientInfo
	a.v2 = req.ProtocolVersion == acp.ProtocolVersion2
	a.mu.Unlock()
	client := "unnamed" // a name and version, never a Go value
	if ci := req.ClientInfo; ci != nil {
		client = strings.TrimSpace(ci.Name + " " + ci.Version)
	}
	a.log.Info("initialize", "protocolVersion", req.ProtocolVersion, "client", client,
		"terminalOutput", req.ClientCapabilities.TerminalOutput())
	// We speak version 1 only: a client asking for 1 gets 1; any other
	// request gets our latest, and the client decides whether to go on.
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersion,
		AgentInfo:       &acp.Implementation{Name: a.o.Name, Version: a.o.Version, Title: "ACP Bridge"},
		AgentCapabilities: acp.AgentCapabilities{
			PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true, Image: a.models.AnyImages()},
			// Additional directories are roots like the cwd (containment,
			// permissions); Zed sends them only when this is advertised.
			SessionCapabilities: acp.SessionCapabilities{Close: &acp.Empty{}, AdditionalDirectories: &acp.Empty{}, Fork: &acp.Empty{}, Rewind: &acp.Empty{},
				SystemPrompt: &acp.SystemPromptCaps{Mode: &acp.SystemPromptModeCaps{Override: &acp.Empty{}}}},
			McpCapabilities: acp.McpCapabilities{HTTP: true, SSE: true}, // stdio is a given
		},
		AuthMethods: a.o.authMethods(req.ClientCapabilities),
		// Steering is an extension outside the schema: clients read this
		// and never probe (steer.go).
		Meta: acp.Meta{"steering": map[string]any{"supported": true}},
	}
	if req.ClientCapabilities.AIR() {
		// The JetBrains AIR extensions, to a client that declared them:
		// rewinding the conversation and the files (rewind.go).
		resp.Meta["jetbrains"] = map[string]any{"air": map[string]any{"version": 1,
			"capabilities": []string{acp.AIRRewind, acp.AIRRewindFiles}}}
	}
	if a.o.Logout != nil {
		resp.AgentCapabilities.Auth.Logout = &acp.Empty{}
	}
	if a.offersProviders() { // providers.go
		resp.AgentCapabilities.Providers = &acp.Empty{}
	}
	if a.o.Store != nil { // load.go
		resp.AgentCapabilities.LoadSession = true
		sc := &resp.AgentCapabilities.SessionCapabilities
		sc.List, sc.Resume, sc.Delete = &acp.Empty{}, &acp.Empty{}, &acp.Empty{}
		sc.Title, sc.Archive = &acp.Empty{}, &acp.Empty{} // titles.go
	}
	return resp, nil
}

// Authenticate refuses every method id: this agent has no agent-type auth
// methods (a terminal method is never passed here), so any id is unknown.
func (a *Agent) Authenticate(ctx context.Context, req *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	return nil, acp.InvalidParams("invalid params: unknown auth method %q (this agent has none to authenticate with; log in with `acp-bridge login`)", req.MethodID)
}

func (o *Options) checkDir(path string) error {
	if o.CheckDir != nil {
		return o.CheckDir(path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return fmt.Errorf("cannot be used: %v", err)
	case !fi.IsDir():
		return errors.New("is not a directory")
	}
	return nil
}

// NewSession starts a session rooted at the absolute cwd.
func (a *Agent) NewSession(ctx context.Context, req *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	if err := checkRoots(req.Cwd, req.AdditionalDirectories, req.McpServers); err != nil {
		return nil, err
	}
	if err := a.o.checkDir(req.Cwd); err != nil {
		// Every tool would fail there; say so now, naming the path.
		return nil, acp.InvalidParams("invalid params: cwd %q %v", req.Cwd, err)
	}
	roots := []string{filepath.Clean(req.Cwd)}
	for _, d := range req.AdditionalDirectories {
		roots = append(roots, filepath.Clean(d))
	}
	sp, err := parseSystemPrompt(req.SystemPrompt)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	caps := a.caps
	a.mu.Unlock()
	id := a.o.NewID()
	s := newSession(a, id, roots, caps, a.newLog(id, roots), false)
	// The controls are the log's first event, so a session that is never
	// prompted still lists, loads and resumes with the mode and model it
	// was given. The editor has them from the response.
	ctl := s.ctl.state()
	ctl.Initial = true
	s.emit(ctx, session.New(ctl))
	s.prompts.setClient(sp)
	if err := a.admit(s); err != nil {
		s.close(registry.ErrShutdown)
		return nil, err
	}
	s.mcp.start(ctx, req.McpServers) // bounded; see MCPStartTimeout
	a.log.Info("session created", "session", s.id, "cwd", s.cwd, "mcpServers", len(req.McpServers))
	s.announced.afterReply(ctx)
	modes, opts := s.ctl.Controls()
	return &acp.NewSessionResponse{SessionID: s.id, Modes: modes, ConfigOptions: opts}, nil
}

// admit makes s one of the connection's live sessions: new, fork and load
// end with it. It fails when the agent is shutting down, or when a session
// of that id became live meanwhile (a load racing another).
func (a *Agent) admit(s *conversation) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.shutdown:
		return acp.Errorf(acp.CodeInternalError, "internal error: the agent is shutting down")
	case a.sessions[s.id] != nil:
		return acp.InvalidParams("invalid params: session %s became live while it was loading", s.id)
	}
	a.sessions[s.id] = s
	return nil
}

func (a *Agent) session(id string) (*conversation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil && a.moved[id] {
		return nil, acp.InvalidParams("invalid params: session %s continues in another window (another acp-bridge process took it over); resume it here to take it back", id)
	}
	if s == nil {
		return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: "session not found: " + id, Data: map[string]string{"sessionId": id}}
	}
	return s, nil
}

// Prompt runs one turn. Every update of the turn is written before it returns.
func (a *Agent) Prompt(ctx context.Context, req *acp.PromptRequest) (*acp.PromptResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	stop, usage, err := s.prompt(ctx, req.Prompt, req.MessageID)
	if err != nil {
		return nil, err
	}
	return &acp.PromptResponse{StopReason: stop, Usage: usage}, nil
}

// Cancel stops the session's running turn, if any. It does not block.
func (a *Agent) Cancel(ctx context.Context, req *acp.CancelNotification) {
	a.mu.Lock()
	s := a.sessions[req.SessionID]
	a.mu.Unlock()
	if s != nil {
		s.cancel()
	}
}

// CloseSession cancels the session's work, waits for it, and frees it.
func (a *Agent) CloseSession(ctx context.Context, req *acp.CloseSessionRequest) (*acp.EmptyResponse, error) {
	s := a.forget(req.SessionID)
	if s == nil {
		return nil, &acp.Error{Code: acp.CodeResourceNotFound, Message: "session not found: " + req.SessionID, Data: map[string]string{"sessionId": req.SessionID}}
	}
	s.close(context.Canceled)
	return &acp.EmptyResponse{}, nil
}

// forget takes a session out of the live ones, returning it (nil if it was
// not live). Whoever forgets a session closes it.
func (a *Agent) forget(id string) *conversation {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	delete(a.sessions, id)
	return s
}

// Shutdown closes every session, in parallel: their turns are cancelled and
// waited for, their MCP servers stopped. The editor has gone (or the
// process is exiting).
func (a *Agent) Shutdown() {
	a.mu.Lock()
	ss := slices.Collect(maps.Values(a.sessions))
	a.sessions = map[string]*conversation{}
	a.shutdown = true
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() { s.close(registry.ErrShutdown) })
	}
	wg.Wait()
}

// cancelCause is why a request's turn ends when its context does: the
// connection closed (the editor is gone), or the request was cancelled.
func cancelCause(client acp.Client) error {
	if c, ok := client.(interface{ Done() <-chan struct{} }); ok {
		select {
		case <-c.Done():
			return registry.ErrShutdown
		default:
		}
	}
	return context.Canceled
}
