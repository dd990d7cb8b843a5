package acp

import (
	"context"
	"regexp"
)

// Rewind: taking back an earlier prompt. No shape of it is standard yet;
// these are the ones clients call (the agent side is agent/rewind.go):
//
//   - `_session/rewind` and `_session/rewind_files`, extensions in the
//     JetBrains AIR namespace: the agent lists "sessionRewind" and
//     "sessionRewindFiles" in initialize's _meta.jetbrains.air.capabilities,
//     to a client that declared clientCapabilities._meta.jetbrains.air;
//   - on a v2 connection, the draft's session/rewind and
//     session/edit_prompt (v2conn.go), with a history_truncated update;
//   - session/fork at a message, _meta.jetbrains.air.fork.
const (
	MethodSessionRewind      = "_session/rewind"
	MethodSessionRewindFiles = "_session/rewind_files"

	// AIRRewind and AIRRewindFiles are the AIR capability names.
	AIRRewind      = "sessionRewind"
	AIRRewindFiles = "sessionRewindFiles"
)

// HistoryPoint names a message the client saw: its messageId (a
// ":segment:<n>" suffix a client adds is taken off), else the Nth
// (Occurrence, 1-based) message of its role whose text hashes to
// Fingerprint ("sha256:" and the lowercase hex SHA-256 of the text of its
// text blocks, joined without a separator).
type HistoryPoint struct {
	MessageID   string `json:"messageId"`
	Fingerprint string `json:"messageFingerprint,omitempty"`
	Occurrence  int    `json:"messageOccurrence,omitempty"`
}

var fingerprintForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Check says what is wrong with the point's form (-32602), nil when nothing.
func (p *HistoryPoint) Check(field string) error {
	switch {
	case p == nil:
		return InvalidParams("invalid params: %s is required", field)
	case p.MessageID == "":
		return InvalidParams("invalid params: %s.messageId must not be empty", field)
	case p.Fingerprint != "" && !fingerprintForm.MatchString(p.Fingerprint):
		return InvalidParams("invalid params: %s.messageFingerprint must be \"sha256:\" and 64 lowercase hex digits", field)
	case p.Occurrence < 0:
		return InvalidParams("invalid params: %s.messageOccurrence must be a positive integer", field)
	}
	return nil
}

// RewindSessionRequest is `_session/rewind`: take back BeforeMessage (a user
// message) and everything after it from the conversation. ResumeAtMessage
// is the last agent message kept; it is accepted and not needed (the
// rewind goes back to a prompt's arrival).
type RewindSessionRequest struct {
	SessionID       string        `json:"sessionId"`
	BeforeMessage   *HistoryPoint `json:"beforeMessage"`
	ResumeAtMessage *HistoryPoint `json:"resumeAtMessage,omitempty"`
	Meta            Meta          `json:"_meta,omitempty"`
}

// RewindSessionResponse says whether the conversation was rewound; a false
// one changed nothing, and Reason says why ("busy": a turn runs or is
// queued: cancel it first; "session_not_found").
type RewindSessionResponse struct {
	Rewound bool   `json:"rewound"`
	Reason  string `json:"reason,omitempty"`
}

// RewindFilesRequest is `_session/rewind_files`: put back the files the
// agent's own tools changed after BeforeMessage (DryRun: only say what
// would happen).
type RewindFilesRequest struct {
	SessionID     string        `json:"sessionId"`
	BeforeMessage *HistoryPoint `json:"beforeMessage"`
	DryRun        bool          `json:"dryRun,omitempty"`
	Meta          Meta          `json:"_meta,omitempty"`
}

// RewindFilesResponse is what the rewind did (or would do): CanRewind is
// false, with Reason, when there is nothing it could put back. Restored
// are the files put back (Removed: the agent had created it), Left the
// ones left as they are and why, Commands the commands that ran after
// the message, whose effects no rewind undoes.
type RewindFilesResponse struct {
	CanRewind bool           `json:"canRewind"`
	Reason    string         `json:"reason,omitempty"`
	DryRun    bool           `json:"dryRun,omitempty"`
	Restored  []RestoredFile `json:"restored"`
	Left      []LeftFile     `json:"left"`
	Commands  []string       `json:"commands"`
}

// RestoredFile is a file a rewind put back (or would).
type RestoredFile struct {
	Path    string `json:"path"`
	Removed bool   `json:"removed,omitempty"`
}

// LeftFile is a file a rewind leaves as it is, and why.
type LeftFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SessionRewinder serves `_session/rewind` and `_session/rewind_files`.
type SessionRewinder interface {
	RewindSession(ctx context.Context, req *RewindSessionRequest) (*RewindSessionResponse, error)
	RewindFiles(ctx context.Context, req *RewindFilesRequest) (*RewindFilesResponse, error)
}

// AIR reports whether the client declared the JetBrains AIR extensions
// (clientCapabilities._meta.jetbrains.air with a version of 1 or more).
func (c ClientCapabilities) AIR() bool {
	v, _ := airMeta(c.Meta)["version"].(float64)
	return v >= 1
}

// airMeta is m's _meta.jetbrains.air object, nil when it has none.
func airMeta(m Meta) map[string]any {
	jb, _ := m["jetbrains"].(map[string]any)
	air, _ := jb["air"].(map[string]any)
	return air
}

// ForkPoint is session/fork's _meta.jetbrains.air.fork: the fork keeps the
// history up to and including the message named (nil: no such _meta).
func ForkPoint(m Meta) (*HistoryPoint, error) {
	f, ok := airMeta(m)["fork"].(map[string]any)
	if !ok {
		return nil, nil
	}
	var p HistoryPoint
	p.MessageID, _ = f["messageId"].(string)
	p.Fingerprint, _ = f["messageFingerprint"].(string)
	if n, ok := f["messageOccurrence"].(float64); ok {
		p.Occurrence = int(n)
		if float64(p.Occurrence) != n {
			p.Occurrence = -1
		}
	}
	return &p, p.Check("_meta.jetbrains.air.fork")
}

// The v2 draft's methods (served on a v2 connection only, v2conn.go).
const (
	MethodSessionRewindV2   = "session/rewind"
	MethodSessionEditPrompt = "session/edit_prompt"
)

// V2RewindRequest is v2's session/rewind: keep the history up to
// ToMessageID, discard what follows.
type V2RewindRequest struct {
	SessionID   string `json:"sessionId"`
	ToMessageID string `json:"toMessageId"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// V2RewindResponse names the last message kept.
type V2RewindResponse struct {
	LastMessageID string `json:"lastMessageId"`
}

// V2EditPromptRequest is v2's session/edit_prompt: the history goes back
// to before the user message MessageID, then Content runs as a new prompt.
type V2EditPromptRequest struct {
	SessionID string         `json:"sessionId"`
	MessageID string         `json:"messageId"`
	Content   []ContentBlock `json:"content"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// HistoryRewinder serves the v2 draft's rewind: RewindTo keeps the
// history up to the message named (session/rewind), RewindBefore takes
// back a user message and what followed (session/edit_prompt, which then
// prompts). A running turn is cancelled first. An unknown id is -32002
// with data.reason "unknown_message_id"; edit_prompt's id must be a user
// message's (-32602, reason "not_a_user_message").
type HistoryRewinder interface {
	RewindTo(ctx context.Context, req *V2RewindRequest) (*V2RewindResponse, error)
	RewindBefore(ctx context.Context, sessionID, messageID string) error
}
