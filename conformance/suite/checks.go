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
	{CheckRelativeCwd, Mandatory, "session/new with a relative cwd is rejected with -32602"},
	{CheckUnknownSession, Advisory, "session/prompt for an unknown session is an error"},
	{CheckPromptTurn, Mandatory, "session/prompt is answered once, with a stopReason"},
	{CheckUpdatesBefore, Mandatory, "every update of a turn is sent before the turn's response"},
	{CheckNoUserEcho, Advisory, "the agent does not echo the prompt back as user_message_chunk during a live turn"},
	{CheckCancel, Mandatory, "session/cancel during a turn: exactly one response, stopReason \"cancelled\", not an error"},
	{CheckCancelQuiet, Mandatory, "after a cancelled turn's response, only final updates of its unfinished tool calls"},
	{CheckAfterCancel, Advisory, "the session takes a new prompt after a cancel"},
	{CheckCapabilities, Mandatory, "the agent never calls a client method the client did not advertise"},
	{CheckTermGated, Mandatory, "no terminal _meta (terminal_info/output/exit) unless the client advertised _meta.terminal_output"},
	{CheckUpdateSession, Mandatory, "session/update names a session the agent created or the client loaded"},
	{CheckKnownID, Mandatory, "tool_call_update only for tool calls already announced"},
	{CheckStatusForward, Mandatory, "tool-call statuses only move forward: pending → in_progress → completed | failed"},
	{CheckPermTitle, Mandatory, "a permission request for a tool call the client has not seen carries a title"},
	{CheckTermSequence, Mandatory, "display terminals: terminal_info on the tool_call, then terminal_output, then terminal_exit, all on the same id"},
	{CheckPathsAbsolute, Mandatory, "diff paths, locations, fs paths and terminal cwds are absolute"},
	{CheckCardsFinished, Advisory, "every tool call of a turn that ends normally is completed or failed by the turn's response"},
	{CheckLoadReplay, Mandatory, "session/load replays the conversation before responding, matching the live turn"},
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
