package agent

import (
	"context"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/mappingv2"
	"github.com/acp-bridge/acp-bridge/session"
)

// One core, two wire dialects. A session's log, fold, tools and turn loop
// are the same for a v1 and a v2 client; what differs is how its events
// become updates, one translator per version (mapping for v1, mappingv2
// for v2), and the few places v2 asks for something v1 has no word for:
// the user message's id (prompt), the current-state snapshot and the
// replay cursor of a resume (load.go), and the permission request's shape
// (below). The connection (acp) negotiates the dialect and re-expresses
// requests and responses; the agent learns it from initialize's
// protocolVersion.

// translator turns one session's events into updates for its client.
type translator interface {
	Translate(ev session.Event) []acp.Update
	// EndReplay switches a translator that replayed a log to live.
	EndReplay()
	// PermissionToolCall is the card a permission request shows.
	PermissionToolCall(callID string) (acp.ToolCallUpdate, bool)
}

var (
	_ translator = (*mapping.Translator)(nil)
	_ translator = (*mappingv2.Translator)(nil)
)

// newTranslator is a translator in the session's dialect.
func (s *conversation) newTranslator(replay bool) translator {
	if s.v2 {
		return mappingv2.New(s.scope, s.mappingOptions(replay))
	}
	return mapping.New(s.scope, s.mappingOptions(replay))
}

// sendState sends v2's current-state state_update, which a resume sends
// after any replay and before its answer; nothing for a v1 session. It
// holds the emit lock, so the snapshot takes its place among live updates.
func (s *conversation) sendState(ctx context.Context) {
	tr, ok := s.tr.(*mappingv2.Translator)
	if !ok {
		return
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	s.send(ctx, []acp.Update{tr.Snapshot(running)})
}

// v2Permissions asks a v2 client for permission in v2's shape
// (mappingv2.Permission); everything else goes to the client as it is.
type v2Permissions struct {
	acp.Client
	v2 acp.V2Client
}

func (c v2Permissions) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return c.v2.RequestPermissionV2(ctx, mappingv2.Permission(req))
}

// permissionClient is the client a session's permission requests go to.
func permissionClient(c acp.Client, v2 bool) acp.Client {
	if v, ok := c.(acp.V2Client); ok && v2 {
		return v2Permissions{Client: c, v2: v}
	}
	return c
}
