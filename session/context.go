package session

// Events about the model's context itself: the system prompt a session
// settled on, compactions and the shortening of old tool results. The
// agent's fold applies them to the history exactly as the live session
// did, so a reloaded session sends the same next request.
const (
	TypeSystemPrompt    = "context/system"           // SystemPrompt
	TypeCompaction      = "context/compaction"       // Compaction: its start and its end
	TypeCompactionChunk = "context/compaction/chunk" // CompactionChunk: a piece of the summary as it streams
	TypePrune           = "context/prune"            // Prune: old tool results shortened
)

// SystemPrompt is the fixed part of the system prompt, taken when the
// session first needed it: the base text, the AGENTS.md files and the
// environment. Logged so a reload sends the same bytes (the prompt cache
// and the model see one session, not two).
type SystemPrompt struct {
	Text string `json:"text"`
	// Env is the environment block alone (it is also in Text): what a
	// client prompt in override mode keeps of the agent's own.
	Env          string            `json:"env,omitempty"`
	Instructions []InstructionFile `json:"instructions,omitempty"`
}

// InstructionFile is one AGENTS.md in the prompt, for /help and /tools.
type InstructionFile struct {
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	Shown int    `json:"shown"`         // bytes in the prompt
	Cut   bool   `json:"cut,omitempty"` // only the first part is in the prompt
}

// Compaction statuses, as the protocol names them.
const (
	CompactionInProgress = "in_progress"
	CompactionCompleted  = "completed"
	CompactionFailed     = "failed"
	CompactionCancelled  = "cancelled"
)

// Compaction reasons.
const (
	CompactManual    = "manual"    // /compact
	CompactThreshold = "threshold" // the next request would pass the share of the window
	CompactOverflow  = "overflow"  // the endpoint answered "context length exceeded"
)

// Compaction is one compaction of the model's context: logged with status
// in_progress when it starts and again when it ends. Completed, it replaces
// the context with the summary followed by the last Kept messages as they
// were; failed or cancelled, the context stays as it was.
type Compaction struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Summary string `json:"summary,omitempty"` // completed
	Kept    int    `json:"kept,omitempty"`    // completed: trailing messages kept verbatim
	// Replaced is how many messages the summary stands for (completed).
	Replaced int    `json:"replaced,omitempty"`
	Error    string `json:"error,omitempty"` // failed
}

// CompactionChunk is a piece of a compaction's summary as the model writes it.
type CompactionChunk struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Prune records that the tool results among the first Before messages of
// the context longer than MaxChars were shortened in the model's context
// (the log keeps them whole).
type Prune struct {
	Before   int `json:"before"`
	MaxChars int `json:"maxChars"`
	Count    int `json:"count"` // results shortened
}
