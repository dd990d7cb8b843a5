package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// method is one row of the dispatch table.
type method struct {
	notification bool
	ordered      bool // admitted in arrival order (order.go)
	handle       func(ctx context.Context, a Agent, params json.RawMessage) (any, error)
	// handleConn, when set, serves the method instead of handle: for a
	// method that needs the connection itself (v2's prompt, v2conn.go).
	handleConn func(c *Conn, ctx context.Context, params json.RawMessage) (any, error)
}

// methods maps each ACP method the agent serves to its decoder and handler.
// Params are checked (an object, required fields present, fields of the right
// type) before any agent code runs, so bad input is always -32602.
var methods = map[string]method{
	MethodInitialize: request(func(a Agent) func(context.Context, *InitializeRequest) (*InitializeResponse, error) {
		return a.Initialize
	}, "protocolVersion"),
	MethodAuthenticate: request(func(a Agent) func(context.Context, *AuthenticateRequest) (*AuthenticateResponse, error) {
		return a.Authenticate
	}, "methodId"),
	MethodSessionNew: request(func(a Agent) func(context.Context, *NewSessionRequest) (*NewSessionResponse, error) {
		return a.NewSession
	}, "cwd", "mcpServers"),
	MethodSessionPrompt: inOrder(request(func(a Agent) func(context.Context, *PromptRequest) (*PromptResponse, error) {
		return a.Prompt
	}, "sessionId", "prompt")),
	MethodSessionCancel: {notification: true, handle: func(ctx context.Context, a Agent, raw json.RawMessage) (any, error) {
		var p CancelNotification
		if err := decodeParams(raw, &p, "sessionId"); err != nil {
			return nil, err
		}
		a.Cancel(ctx, &p)
		return nil, nil
	}},
	MethodSessionLoad: optional(func(a SessionLoader) func(context.Context, *LoadSessionRequest) (*LoadSessionResponse, error) {
		return a.LoadSession
	}, "sessionId", "cwd", "mcpServers"),
	MethodSessionResume: optional(func(a SessionResumer) func(context.Context, *ResumeSessionRequest) (*ResumeSessionResponse, error) {
		return a.ResumeSession
	}, "sessionId", "cwd"),
	MethodSessionFork: optional(func(a SessionForker) func(context.Context, *ForkSessionRequest) (*ForkSessionResponse, error) {
		return a.ForkSession
	}, "sessionId", "cwd"),
	MethodSessionList: optional(func(a SessionLister) func(context.Context, *ListSessionsRequest) (*ListSessionsResponse, error) {
		return a.ListSessions
	}),
	MethodSessionClose: optional(func(a SessionCloser) func(context.Context, *CloseSessionRequest) (*EmptyResponse, error) {
		return a.CloseSession
	}, "sessionId"),
	MethodSessionDelete: optional(func(a SessionDeleter) func(context.Context, *DeleteSessionRequest) (*EmptyResponse, error) {
		return a.DeleteSession
	}, "sessionId"),
	MethodSessionSetMode: optional(func(a ModeSetter) func(context.Context, *SetModeRequest) (*EmptyResponse, error) {
		return a.SetSessionMode
	}, "sessionId", "modeId"),
	MethodSessionSetConfigOption: optional(func(a ConfigOptionSetter) func(context.Context, *SetConfigOptionRequest) (*SetConfigOptionResponse, error) {
		return a.SetSessionConfigOption
	}, "sessionId", "configId", "value"),
	MethodSessionSetModel: optional(func(a ModelSetter) func(context.Context, *SetModelRequest) (*SetConfigOptionResponse, error) {
		return a.SetSessionModel
	}, "sessionId", "modelId"),
	MethodSessionSteering: inOrder(optional(func(a SessionSteerer) func(context.Context, *SteeringRequest) (*SteeringResponse, error) {
		return a.Steer
	}, "sessionId", "prompt")),
	MethodSessionRewind: inOrder(optional(func(a SessionRewinder) func(context.Context, *RewindSessionRequest) (*RewindSessionResponse, error) {
		return a.RewindSession
	}, "sessionId", "beforeMessage")),
	MethodSessionRewindFiles: inOrder(optional(func(a SessionRewinder) func(context.Context, *RewindFilesRequest) (*RewindFilesResponse, error) {
		return a.RewindFiles
	}, "sessionId", "beforeMessage")),
	MethodSessionSetTitle: optional(func(a SessionTitler) func(context.Context, *SetSessionTitleRequest) (*SetSessionTitleResponse, error) {
		return a.SetSessionTitle
	}, "sessionId", "title"),
	MethodSessionArchive: optional(func(a SessionArchiver) func(context.Context, *ArchiveSessionRequest) (*EmptyResponse, error) {
		return a.ArchiveSession
	}, "sessionId"),
	MethodSessionUnarchive: optional(func(a SessionArchiver) func(context.Context, *ArchiveSessionRequest) (*EmptyResponse, error) {
		return a.UnarchiveSession
	}, "sessionId"),
	MethodProvidersList: optional(func(a ProviderConfigurer) func(context.Context, *ListProvidersRequest) (*ListProvidersResponse, error) {
		return a.ListProviders
	}),
	MethodProvidersSet: optional(func(a ProviderConfigurer) func(context.Context, *SetProviderRequest) (*EmptyResponse, error) {
		return a.SetProvider
	}, "providerId", "apiType", "baseUrl"),
	MethodProvidersDisable: optional(func(a ProviderConfigurer) func(context.Context, *DisableProviderRequest) (*EmptyResponse, error) {
		return a.DisableProvider
	}, "providerId"),
	MethodLogout: optional(func(a LoggerOuter) func(context.Context, *LogoutRequest) (*LogoutResponse, error) {
		return a.Logout
	}),
}

func request[Req, Resp any](bind func(Agent) func(context.Context, *Req) (*Resp, error), required ...string) method {
	return method{handle: func(ctx context.Context, a Agent, raw json.RawMessage) (any, error) {
		var p Req
		if err := decodeParams(raw, &p, required...); err != nil {
			return nil, err
		}
		return bind(a)(ctx, &p)
	}}
}

// inOrder makes m an ordered method: its requests take their places (a
// prompt its turn, a steered message its step) in the order they arrived.
func inOrder(m method) method {
	m.ordered = true
	return m
}

// optional serves a method only when the agent implements its interface I.
func optional[I any, Req, Resp any](bind func(I) func(context.Context, *Req) (*Resp, error), required ...string) method {
	return method{handle: func(ctx context.Context, a Agent, raw json.RawMessage) (any, error) {
		impl, ok := a.(I)
		if !ok {
			return nil, Errorf(CodeMethodNotFound, "method not supported by this agent")
		}
		var p Req
		if err := decodeParams(raw, &p, required...); err != nil {
			return nil, err
		}
		return bind(impl)(ctx, &p)
	}}
}

// decodeParams checks that params is an object holding every required field
// (not null) and decodes it into p.
func decodeParams(raw json.RawMessage, p any, required ...string) error {
	if len(raw) == 0 || string(raw) == "null" {
		if len(required) == 0 {
			return nil
		}
		return InvalidParams("invalid params: missing params (need %s)", strings.Join(required, ", "))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return InvalidParams("invalid params: params must be an object")
	}
	var missing []string
	for _, name := range required {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	if len(missing) > 0 {
		return InvalidParams("invalid params: missing required field %s", strings.Join(missing, ", "))
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return InvalidParams("invalid params: %s", describeDecodeError(err))
	}
	return nil
}

func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "params"
		}
		return fmt.Sprintf("%q must be %s, not %s", field, jsonTypeName(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

// jsonTypeName names a Go kind the way a JSON author would read it.
func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "of type " + kind
}
