package session

// Taking back part of a conversation, and the files its tools changed
// (agent/rewind.go). Both are events like any other: the fold applies a
// rewind to the model's context, a replay leaves the rewound messages out,
// and a later rewind reads what an earlier one restored.
const (
	TypeRewind        = "context/rewind" // Rewind: a user message and what followed it taken back
	TypeFilesRestored = "files/restore"  // FilesRestored: what a rewind did to the files
)

// Rewind takes back the user message logged at Before and every event after
// it up to Until (exclusive; 0: up to the rewind itself): they leave the
// model's context, which becomes what it was when that message arrived, and
// a replay leaves them out. A slash command that rewinds sets Until to its
// own prompt, which stays in the transcript. Usage and cost, controls,
// "always" answers and the title stay as they are.
//
// A rewind to a message (v2's session/rewind, a fork at a message) sets
// After instead of Before: the event at After (the last one of the message
// kept) and those before it stay, the ones after it are taken back, and the
// context becomes what it was after that event, without the tool calls of
// a response whose results were taken back.
type Rewind struct {
	Before int64 `json:"before,omitempty"`
	After  int64 `json:"after,omitempty"`
	Until  int64 `json:"until,omitempty"`
	// Via names what asked ("_session/rewind", "/rewind", "session/rewind",
	// "session/edit_prompt"), for whoever reads the log.
	Via string `json:"via,omitempty"`
}

// FilesRestored is what a rewind did to the files the agent's tools
// changed after the user message at Before: the files it put back (their
// content now, by hash, so a later rewind knows the agent left them so)
// and the ones it left, with why.
type FilesRestored struct {
	Before   int64          `json:"before"`
	Restored []FileRestored `json:"restored,omitempty"`
	Left     []FileLeft     `json:"left,omitempty"`
}

// FileRestored is one file put back: Removed when the agent had created
// it, else its content is the one hashed (sha256, hex) in Hash. Undid are
// the seqs of the tool results whose changes were taken back.
type FileRestored struct {
	Path    string  `json:"path"`
	Removed bool    `json:"removed,omitempty"`
	Hash    string  `json:"hash,omitempty"`
	Undid   []int64 `json:"undid"`
}

// FileLeft is a file a rewind did not touch, and why.
type FileLeft struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
