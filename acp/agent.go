package acp

import "context"

// Agent is the agent side of ACP: one method per baseline request, shaped
// (ctx, *Request) (*Response, error). Optional methods are the small
// interfaces below, found by type assertion; a method whose interface the
// agent does not implement answers -32601.
type Agent interface {
	Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error)
	Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error)
	NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error)
	// Prompt runs a turn. A later prompt waits until this one calls
	// Admitted(ctx) (once it holds the turn or its place in the queue) or
	// returns: prompts take their places in the order they arrived.
	Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error)
	// Cancel runs inline on the read loop: it must not block.
	Cancel(ctx context.Context, req *CancelNotification)
}

type SessionLoader interface {
	LoadSession(ctx context.Context, req *LoadSessionRequest) (*LoadSessionResponse, error)
}

type SessionResumer interface {
	ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*ResumeSessionResponse, error)
}

// SessionForker serves session/fork (unstable).
type SessionForker interface {
	ForkSession(ctx context.Context, req *ForkSessionRequest) (*ForkSessionResponse, error)
}

// SessionSteerer serves `_session/steering` (an extension).
type SessionSteerer interface {
	Steer(ctx context.Context, req *SteeringRequest) (*SteeringResponse, error)
}

// SessionTitler serves session/set_title (unstable).
type SessionTitler interface {
	SetSessionTitle(ctx context.Context, req *SetSessionTitleRequest) (*SetSessionTitleResponse, error)
}

// SessionArchiver serves session/archive and session/unarchive (unstable).
type SessionArchiver interface {
	ArchiveSession(ctx context.Context, req *ArchiveSessionRequest) (*EmptyResponse, error)
	UnarchiveSession(ctx context.Context, req *ArchiveSessionRequest) (*EmptyResponse, error)
}

type SessionLister interface {
	ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error)
}

type SessionCloser interface {
	CloseSession(ctx context.Context, req *CloseSessionRequest) (*EmptyResponse, error)
}

type SessionDeleter interface {
	DeleteSession(ctx context.Context, req *DeleteSessionRequest) (*EmptyResponse, error)
}

type ModeSetter interface {
	SetSessionMode(ctx context.Context, req *SetModeRequest) (*EmptyResponse, error)
}

type ConfigOptionSetter interface {
	SetSessionConfigOption(ctx context.Context, req *SetConfigOptionRequest) (*SetConfigOptionResponse, error)
}

// ModelSetter serves session/set_model (removed from the schema; see
// MethodSessionSetModel).
type ModelSetter interface {
	SetSessionModel(ctx context.Context, req *SetModelRequest) (*SetConfigOptionResponse, error)
}

type LoggerOuter interface {
	Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error)
}

// Elicitor is the client's elicitation/create and elicitation/complete,
// for clients that advertise elicitation. Conn implements it.
type Elicitor interface {
	CreateElicitation(ctx context.Context, req *CreateElicitationRequest) (*CreateElicitationResponse, error)
	CompleteElicitation(ctx context.Context, n *CompleteElicitationNotification) error
}

// Client is what an agent may call on the editor. Conn implements it.
type Client interface {
	SessionUpdate(ctx context.Context, sessionID string, u Update) error
	RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error)
	ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, req *WriteTextFileRequest) error
}
