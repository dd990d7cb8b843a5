package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/session"
)

// A failure the user must act on (no key, a refused key, a model request
// that failed after its retries) ends session/prompt with a JSON-RPC error,
// not with text: an editor shows an error as an error (Zed: a callout; for
// -32000 "Authentication required" with the agent's auth methods), while
// text in agent_message_chunk reads as the model's answer. The message
// names the settings as a user of that editor changes them (editorOf reads
// the client's clientInfo): the agent's environment in the editor's agent
// configuration, or `acp-bridge login`.

// promptError is the JSON-RPC error for a failed model request, for a
// user of the editor ed.
func promptError(err error, ed clientKind) *acp.Error {
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
	return &acp.Error{Code: acp.CodeAuthRequired, Data: data, Message: what + ". " + keyAdvice(env, ed)}
}

// clientKind is the editor as far as its settings go: the advice for one
// editor's users is wrong for another's.
type clientKind int

const (
	editorUnknown clientKind = iota
	editorZed
	editorJetBrains
	editorCodeCompanion
	editorAgentShell
)

// editorOf names the editor from its clientInfo; a client it does not know
// gets neutral advice.
func editorOf(info *acp.Implementation) clientKind {
	if info == nil {
		return editorUnknown
	}
	name := strings.ToLower(info.Name + " " + info.Title)
	switch {
	case strings.Contains(name, "codecompanion"):
		return editorCodeCompanion
	case strings.Contains(name, "agent-shell"), strings.Contains(name, "acp.el"), strings.Contains(name, "emacs"):
		return editorAgentShell
	case strings.Contains(name, "jetbrains"), strings.Contains(name, "intellij"):
		return editorJetBrains
	case strings.TrimSpace(strings.ToLower(info.Name)) == "zed":
		return editorZed
	}
	return editorUnknown
}

// keyAdvice says where a key goes, as a user of the editor sets it.
func keyAdvice(env string, ed clientKind) string {
	where := map[clientKind]string{
		editorZed:           `in Zed, in the "env" of its entry under "agent_servers" in settings.json`,
		editorJetBrains:     `in the "env" of its entry under "agent_servers" in ~/.jetbrains/acp.json`,
		editorCodeCompanion: `in CodeCompanion, in the "env" of the acp_bridge adapter (or in the environment Neovim starts with)`,
		editorAgentShell:    `in agent-shell, in the :environment-variables of its agent config (or in Emacs's environment, with :inherit-env t)`,
		editorUnknown:       `in your editor's settings for this agent (its environment variables), or in the environment the editor starts with`,
	}[ed]
	return fmt.Sprintf("Set %s to a valid key in the environment acp-bridge starts with: %s; "+
		"or run acp-bridge login in a terminal. The key is read when acp-bridge starts.", env, where)
}

// maxTurnNotice says why a turn stopped at its request limit.
// endpointNotice is what the model endpoint said about an answer it ended
// (model.EventNotice), in its words.
func endpointNotice(said string) session.Notice {
	return session.Notice{Severity: acp.NoticeWarning, Title: "The model endpoint ended the answer", Description: "It says: " + said}
}

func maxTurnNotice(n int) session.Notice {
	how := "Send a message to let the agent go on, or raise the limit (limits.max_turn_requests in the config file, or --max-turn-requests)."
	return session.Notice{
		Text:     fmt.Sprintf("Stopped: this turn reached its limit of %d model requests (max_turn_requests). ", n) + how,
		Severity: acp.NoticeWarning, Title: fmt.Sprintf("Stopped after %d model requests", n), Description: how,
	}
}
