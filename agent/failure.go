package agent

import (
	"errors"
	"fmt"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
)

// A failure the user must act on (no key, a refused key, a model request
// that failed after its retries) ends session/prompt with a JSON-RPC error,
// not with text: an editor shows an error as an error (Zed: a callout; for
// -32000 "Authentication required" with the agent's auth methods), while
// text in agent_message_chunk reads as the model's answer. The message
// names the settings as a user of the editor changes them: the agent's
// environment in the editor's agent configuration (Zed: "env" of the entry
// under "agent_servers" in settings.json), or `acp-bridge login`.

// promptError is the JSON-RPC error for a failed model request.
func promptError(err error) *acp.Error {
	var me *model.Error
	if !errors.As(err, &me) {
		return &acp.Error{Code: acp.CodeInternalError, Message: "The model request failed: " + err.Error()}
	}
	data := map[string]any{"kind": string(me.Kind)}
	if me.Status != 0 {
		data["status"] = me.Status
	}
	if me.Kind != model.ErrAuth {
		// err, not me: it says how many attempts were made ("gave up after …").
		return &acp.Error{Code: acp.CodeInternalError, Message: "The model request failed: " + err.Error(), Data: data}
	}
	env := me.KeyEnv
	if env == "" {
		env = "the API key variable"
	} else {
		data["keyEnv"] = env
	}
	what := "The model endpoint needs an API key"
	if me.Status != 0 {
		what = fmt.Sprintf("The model endpoint refused the API key (HTTP %d)", me.Status)
	}
	if me.Msg != "" {
		what += ": " + me.Msg
	}
	return &acp.Error{Code: acp.CodeAuthRequired, Data: data, Message: what + ". " + keyAdvice(env)}
}

// keyAdvice says where a key goes, as an editor user sets it.
func keyAdvice(env string) string {
	return fmt.Sprintf("Set %s to a valid key in the environment acp-bridge starts with: in Zed, in the \"env\" of its entry "+
		"under \"agent_servers\" in settings.json; or run acp-bridge login in a terminal. The key is read when acp-bridge starts.", env)
}

// maxTurnNotice says why a turn stopped at its request limit.
func maxTurnNotice(n int) session.Notice {
	how := "Send a message to let the agent go on, or raise the limit (limits.max_turn_requests in the config file, or --max-turn-requests)."
	return session.Notice{
		Text:     fmt.Sprintf("Stopped: this turn reached its limit of %d model requests (max_turn_requests). ", n) + how,
		Severity: acp.NoticeWarning, Title: fmt.Sprintf("Stopped after %d model requests", n), Description: how,
	}
}
