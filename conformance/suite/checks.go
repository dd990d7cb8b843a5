package suite

// Check ids of the checks the runner makes step by step.
const (
	CheckInitVersion     = "init.version"
	CheckInitUnsupported = "init.unsupported-version"
	CheckUnknownMethod   = "rpc.unknown-method"
	CheckUnknownNotif    = "rpc.unknown-notification"
	CheckBadParams       = "rpc.bad-params"
	CheckParseError      = "rpc.parse-error"
	CheckSessionNew      = "session.new"
	CheckRelativeCwd     = "session.relative-cwd"
	CheckUnknownSession  = "prompt.unknown-session"
	CheckPromptTurn      = "prompt.turn"
	CheckUpdatesBefore   = "prompt.updates-before-response"
	CheckNoUserEcho      = "prompt.no-user-echo"
	CheckCancel          = "prompt.cancel"
	CheckCancelQuiet     = "prompt.cancel-quiet"
	CheckAfterCancel     = "prompt.after-cancel"
	CheckLoadReplay      = "load.replay"
	CheckDeleteUnknown   = "session.delete-unknown"
	CheckFork            = "session.fork"
	CheckCardsFinished   = "toolcall.finished"
	CheckExit            = "process.exit-on-eof"
)

// CheckDef describes one check.
type CheckDef struct {
	ID          string
	Level       Level
	Description string
}

// Checks lists every check in report order.
var Checks = []CheckDef{
	{CheckStdout, Mandatory, "stdout carries only JSON-RPC 2.0 messages, one per line"},
	{CheckResponses, Mandatory, "every client request gets exactly one response; nothing else is answered"},
	{CheckSchemaAgent, Mandatory, "every agent message matches the official ACP schema"},
	{CheckSchemaClient, Advisory, "every message the suite sent matched the schema (a self-check)"},
	{CheckInitVersion, Mandatory, "initialize with protocolVersion 1 is answered with 1"},
	{CheckInitUnsupported, Mandatory, "initialize with an unsupported version is answered with the agent's own version, not an echo or an error"},
	{CheckUnknownMethod, Mandatory, "unknown methods, plain and _-prefixed, get -32601"},
	{CheckUnknownNotif, Mandatory, "unknown notifications, plain and _-prefixed, are ignored and the agent keeps serving"},
	{CheckBadParams, Mandatory, "requests with ill-typed params get -32602"},
	{CheckParseError, Advisory, "a line that is not JSON gets -32700 with id null, and the agent keeps serving"},
	{CheckSessionNew, Mandatory, "session/new with an absolute cwd returns a session id"},
	{CheckRelativeCwd, Advisory, "session/new with a relative cwd is rejected with -32602 (a relative cwd is the client's error; rejecting it is good practice, not a MUST)"},
	{CheckDeleteUnknown, Mandatory, "session/delete (when advertised) of an unknown or already deleted id succeeds"},
	{CheckUnknownSession, Advisory, "session/prompt for an unknown session is an error"},
	{CheckPromptTurn, Mandatory, "session/prompt is answered once, with a stopReason"},
	{CheckUpdatesBefore, Mandatory, "every update of a turn is sent before the turn's response"},
	{CheckNoUserEcho, Advisory, "the agent does not echo the prompt back as user_message_chunk during a live turn"},
	{CheckCancel, Mandatory, "session/cancel during a turn: exactly one response, stopReason \"cancelled\", not an error"},
	{CheckCancelQuiet, Mandatory, "after a cancelled turn's response, only final updates of its unfinished tool calls"},
	{CheckAfterCancel, Advisory, "the session takes a new prompt after a cancel"},
	{CheckCapabilities, Mandatory, "the agent never calls a client method the client did not advertise"},
	{CheckTermGated, Mandatory, "no terminal _meta (terminal_info/output/exit) unless the client advertised _meta.terminal_output, and no _meta.terminal_output_delta unless it advertised _meta.terminal_output_delta"},
	{CheckNoticeGated, Mandatory, "notice updates only when the client advertised session.notices; compaction_update and compaction_summary_chunk only with session.compaction"},
	{CheckUpdateSession, Mandatory, "session/update names a session the agent created or the client loaded"},
	{CheckKnownID, Mandatory, "tool_call_update only for tool calls already announced"},
	{CheckStatusForward, Mandatory, "tool-call statuses only move forward: pending → in_progress → completed | failed"},
	{CheckToolName, Advisory, "every tool_call carries the tool's programmatic name (name), and its updates never contradict it"},
	{CheckPermTitle, Mandatory, "a permission request for a tool call the client has not seen carries a title"},
	{CheckTermSequence, Mandatory, "display terminals: terminal_info on the tool_call, then terminal_output, then terminal_exit, all on the same id"},
	{CheckPathsAbsolute, Mandatory, "diff paths, locations, fs paths and terminal cwds are absolute"},
	{CheckCardsFinished, Advisory, "every tool call of a turn that ends normally is completed or failed by the turn's response"},
	{CheckLoadReplay, Mandatory, "session/load of the session live on this connection replays the conversation before responding with an object, matching the live turn"},
	{CheckFork, Mandatory, "session/fork (when advertised) answers like session/new with a new id, the fork's load replays the original's history, and the original is untouched"},
	{CheckExit, Advisory, "the agent exits when its stdin is closed"},
}

func checkDef(id string) CheckDef {
	for _, d := range Checks {
		if d.ID == id {
			return d
		}
	}
	return CheckDef{ID: id, Level: Advisory, Description: id}
}
