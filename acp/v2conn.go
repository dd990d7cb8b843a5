package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// Negotiation. The first initialize decides the connection's dialect, once:
// protocolVersion 2 exactly gets v2; anything else gets v1 as before (a
// client asking for 999 gets v1, the stable version, as the conformance
// suite's version scenario expects: v2 is a draft, so only a client that
// names it gets it). A v2 connection refuses a later initialize asking
// for less than 2 (-32600), as the SDK's router does; the repeated
// initialize of a v1 connection is answered as v1 always answered it.
//
// JSON-RPC batches: the SDK 2.4.0 (whose schema is the draft's) answers a
// JSON array with one -32600 on every version ("ACP does not use JSON-RPC
// batches"); the line stream already does the same (stream.go), on both.

// peekVersion reads an initialize's protocolVersion (-1 when unreadable).
func peekVersion(params *json.RawMessage) int {
	if params == nil {
		return -1
	}
	var p struct {
		V *int `json:"protocolVersion"`
	}
	if json.Unmarshal(*params, &p) != nil || p.V == nil {
		return -1
	}
	return *p.V
}

// route picks the method table for req, deciding the dialect at the first
// initialize. It runs on the read loop only. A nil table with an error
// answers the request with it.
func (c *Conn) route(req *jsonrpc2.Request) (map[string]method, *Error) {
	if req.Method == MethodInitialize && !req.Notif {
		v := peekVersion(req.Params)
		if !c.negotiated {
			c.negotiated = true
			if v == ProtocolVersion2 {
				c.v2.Store(true)
			}
		} else if c.v2.Load() && v < ProtocolVersion2 {
			return nil, Errorf(CodeInvalidRequest, "invalid request: this connection speaks ACP v2; a repeated initialize must ask for version 2")
		}
	}
	if c.v2.Load() {
		return methodsV2, nil
	}
	return methods, nil
}

// V2 reports whether the connection speaks v2.
func (c *Conn) V2() bool { return c.v2.Load() }

// methodsV2 is v2's method set: the baseline session methods (new, list,
// resume, close, prompt, cancel), delete, config options (modes are the
// option of category "mode"), auth/login and auth/logout, and the steering
// extension. v1's load, set_mode, authenticate, logout, fork and the
// unstable title and archive methods are not served (-32601).
var methodsV2 = map[string]method{
	MethodInitialize: {handle: func(ctx context.Context, a Agent, raw json.RawMessage) (any, error) {
		var p V2InitializeRequest
		if err := decodeParams(raw, &p, "protocolVersion", "info"); err != nil {
			return nil, err
		}
		resp, err := a.Initialize(ctx, &InitializeRequest{ProtocolVersion: ProtocolVersion2,
			ClientCapabilities: p.Capabilities.V1(), ClientInfo: p.Info, Meta: p.Meta})
		if err != nil {
			return nil, err
		}
		return V2Initialize(resp), nil
	}},
	MethodAuthLogin: request(func(a Agent) func(context.Context, *AuthenticateRequest) (*EmptyResponse, error) {
		return func(ctx context.Context, r *AuthenticateRequest) (*EmptyResponse, error) {
			if _, err := a.Authenticate(ctx, r); err != nil {
				return nil, err
			}
			return &EmptyResponse{}, nil
		}
	}, "methodId"),
	MethodAuthLogout: optional(func(a LoggerOuter) func(context.Context, *LogoutRequest) (*EmptyResponse, error) {
		return func(ctx context.Context, r *LogoutRequest) (*EmptyResponse, error) {
			if _, err := a.Logout(ctx, r); err != nil {
				return nil, err
			}
			return &EmptyResponse{}, nil
		}
	}),
	MethodSessionNew: request(func(a Agent) func(context.Context, *NewSessionRequest) (*V2NewSessionResponse, error) {
		return func(ctx context.Context, r *NewSessionRequest) (*V2NewSessionResponse, error) {
			if r.McpServers == nil {
				r.McpServers = []McpServer{} // optional in v2
			}
			resp, err := a.NewSession(ctx, r)
			if err != nil {
				return nil, err
			}
			return &V2NewSessionResponse{SessionID: resp.SessionID, ConfigOptions: V2ConfigOptions(resp.ConfigOptions), Meta: resp.Meta}, nil
		}
	}, "cwd"),
	MethodSessionList: methods[MethodSessionList],
	MethodSessionResume: optional(func(a SessionResumer) func(context.Context, *V2ResumeSessionRequest) (*V2ResumeSessionResponse, error) {
		return func(ctx context.Context, r *V2ResumeSessionRequest) (*V2ResumeSessionResponse, error) {
			from, err := ParseReplayFrom(r.ReplayFrom)
			if err != nil {
				return nil, err
			}
			req := r.ResumeSessionRequest
			req.ReplayFrom = from
			resp, err := a.ResumeSession(ctx, &req)
			if err != nil {
				return nil, err
			}
			return &V2ResumeSessionResponse{ConfigOptions: V2ConfigOptions(resp.ConfigOptions), Meta: resp.Meta}, nil
		}
	}, "sessionId", "cwd"),
	MethodSessionClose:  methods[MethodSessionClose],
	MethodSessionDelete: methods[MethodSessionDelete],
	MethodSessionPrompt: {ordered: true, handleConn: (*Conn).promptV2},
	MethodSessionCancel: methods[MethodSessionCancel],
	MethodSessionSetConfigOption: optional(func(a ConfigOptionSetter) func(context.Context, *V2SetConfigOptionRequest) (*V2SetConfigOptionResponse, error) {
		return func(ctx context.Context, r *V2SetConfigOptionRequest) (*V2SetConfigOptionResponse, error) {
			req := &SetConfigOptionRequest{SessionID: r.SessionID, ConfigID: r.ConfigID, Value: r.Value, Meta: r.Meta}
			switch r.Type {
			case "id":
			case ConfigBoolean:
				req.Type = ConfigBoolean
			default:
				return nil, InvalidParams("invalid params: unsupported config value type %q (want \"id\" or \"boolean\")", r.Type)
			}
			resp, err := a.SetSessionConfigOption(ctx, req)
			if err != nil {
				return nil, err
			}
			return &V2SetConfigOptionResponse{ConfigOptions: V2ConfigOptions(resp.ConfigOptions), Meta: resp.Meta}, nil
		}
	}, "sessionId", "configId", "type", "value"),
	MethodSessionSteering: methods[MethodSessionSteering],
	MethodSessionRewindV2: inOrder(optional(func(a HistoryRewinder) func(context.Context, *V2RewindRequest) (*V2RewindResponse, error) {
		return a.RewindTo
	}, "sessionId", "toMessageId")),
	MethodSessionEditPrompt: {ordered: true, handleConn: (*Conn).editPromptV2},
}

// editPromptV2 serves v2's session/edit_prompt: the history goes back to
// before the user message named (the agent cancels a running turn first),
// then the new content runs as session/prompt does, answered with the new
// user message's id once it is accepted.
func (c *Conn) editPromptV2(ctx context.Context, raw json.RawMessage) (any, error) {
	var p V2EditPromptRequest
	if err := decodeParams(raw, &p, "sessionId", "messageId", "content"); err != nil {
		return nil, err
	}
	if len(p.Content) == 0 {
		return nil, InvalidParams("invalid params: content must hold at least one content block")
	}
	r, ok := c.agent.(HistoryRewinder)
	if !ok {
		return nil, Errorf(CodeMethodNotFound, "method not supported by this agent")
	}
	if err := r.RewindBefore(ctx, p.SessionID, p.MessageID); err != nil {
		return nil, err
	}
	prompt, _ := json.Marshal(PromptRequest{SessionID: p.SessionID, Prompt: p.Content, Meta: p.Meta})
	return c.promptV2(ctx, prompt)
}

// promptV2 serves v2's session/prompt: the turn runs on after the answer,
// which comes once the prompt has its place in the conversation (the
// agent's Accepted: its user message is logged; a prompt queued behind a
// running turn is answered when its turn comes) and carries the id of the
// user message it became. One cancelled while it waited is -32800. Its
// place in line among requests is the one v1 prompts take (Admitted). An error before that is the answer; after it, the
// turn ends with an idle state_update (the error stop reason), as the draft
// requires, and the error is only logged here.
func (c *Conn) promptV2(ctx context.Context, raw json.RawMessage) (any, error) {
	var p PromptRequest
	if err := decodeParams(raw, &p, "sessionId", "prompt"); err != nil {
		return nil, err
	}
	if len(p.Prompt) == 0 {
		return nil, InvalidParams("invalid params: prompt must hold at least one content block")
	}
	p.MessageID = newMessageID()
	place, _ := ctx.Value(admissionKey{}).(*admission)
	// The turn outlives the request: it ends with session/cancel, close, or
	// the connection. Its place in line is the request's.
	tctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if place != nil {
		tctx = context.WithValue(tctx, admissionKey{}, place)
	}
	// Accepted answers the request and waits until the answer is written:
	// the turn's next update follows it on the wire, as v1's follow the
	// prompt's own order.
	accepted, replied := make(chan struct{}), make(chan struct{})
	AfterReply(ctx, func() { close(replied) }) // after the answer, or its failure
	var once sync.Once
	tctx = context.WithValue(tctx, acceptedKey{}, func() {
		once.Do(func() {
			close(accepted)
			select {
			case <-replied:
			case <-c.Done():
			}
		})
	})
	done := make(chan error, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		go func() { // the connection's end ends the turn
			select {
			case <-c.Done():
				cancel()
			case <-tctx.Done():
			}
		}()
		_, err := c.agent.Prompt(tctx, &p)
		if err != nil {
			c.log.Debug("v2 prompt ended with an error", "session", p.SessionID, "err", err)
		}
		done <- err
	}()
	select {
	case <-accepted:
	case err := <-done:
		switch {
		case closed(accepted):
		case err != nil:
			return nil, err
		default: // ended without its message: cancelled while it waited its turn
			return nil, Errorf(CodeRequestCancelled, "the prompt was cancelled before its message joined the conversation")
		}
	}
	return &V2PromptResponse{MessageID: p.MessageID}, nil
}

func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func newMessageID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// RequestPermissionV2 asks a v2 client (session/request_permission in v2's shape).
func (c *Conn) RequestPermissionV2(ctx context.Context, req *V2RequestPermissionRequest) (*RequestPermissionResponse, error) {
	var resp RequestPermissionResponse
	if err := c.callClient(ctx, MethodSessionRequestPermission, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

var _ V2Client = (*Conn)(nil)
