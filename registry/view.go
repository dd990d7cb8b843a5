package registry

// View is a presentation of a call or its result: one of GenericCard,
// TerminalCard, DiffCard or NoCard. The set is closed; package mapping turns views
// into ACP tool cards.
type View interface{ isView() }

// Location is a file position the card points at. Path is absolute; Line is
// 1-based, 0 when the whole file is meant.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// GenericCard is a titled card with text content and locations.
type GenericCard struct {
	Title     string
	Kind      string // an ACP tool kind: read, edit, search, execute, fetch, other, ...
	Content   []Content
	Locations []Location
}

// TerminalCard shows a command and its output as a terminal.
type TerminalCard struct {
	Command     string
	Cwd         string // absolute
	Description string
	Output      string
	ExitCode    *int
	Signal      string
	TimedOut    bool
	// Stopped says which time limit stopped the command and where it was
	// set (registry.StoppedAfter), shown with the exit status; "" when no
	// limit did, or the result predates it.
	Stopped   string
	Truncated bool
}

// FileDiff is one file's change: OldText nil for a new file.
type FileDiff struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

// DiffCard shows file changes.
type DiffCard struct {
	Title     string
	Diffs     []FileDiff
	Locations []Location
}

// NoCard is a call the editor shows elsewhere (todo_write's list is the
// session's plan): it gets no card while it runs or when it succeeds, so
// the same news is not shown twice. A failed call still gets a card.
type NoCard struct{}

func (GenericCard) isView()  {}
func (NoCard) isView()       {}
func (TerminalCard) isView() {}
func (DiffCard) isView()     {}
