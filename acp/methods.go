package acp

// Methods the agent serves (the client calls these).
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionList            = "session/list"
	MethodSessionClose           = "session/close"
	MethodSessionDelete          = "session/delete"
	MethodSessionFork            = "session/fork"      // unstable
	MethodSessionSetTitle        = "session/set_title" // unstable
	MethodSessionArchive         = "session/archive"   // unstable
	MethodSessionUnarchive       = "session/unarchive" // unstable
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	// MethodSessionSetModel was removed from the schema (0.13.5) in favour
	// of the model config option, but 16 of the registry's 30 agents still
	// answer it and clients still call it (the AI SDK provider does).
	MethodSessionSetModel = "session/set_model"
	// MethodSessionSteering is an extension (not in the schema) that
	// claude-agent-acp and codex-acp serve: a message for the running
	// turn. The agent advertises it in initialize's
	// _meta.steering.supported.
	MethodSessionSteering = "_session/steering"
)

// Methods the client serves (the agent calls these).
const (
	MethodSessionUpdate            = "session/update"
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodTerminalRelease          = "terminal/release"
	MethodElicitationCreate        = "elicitation/create"
	MethodElicitationComplete      = "elicitation/complete"
)

// MethodCancelRequest is the protocol-level notification either side may send
// to cancel one outstanding request.
const MethodCancelRequest = "$/cancel_request"
