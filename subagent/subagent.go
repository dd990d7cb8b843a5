// Package subagent runs delegated work: a turn loop of its own, with a fresh
// context (a system prompt and the task, none of the parent's history), a
// registry scope of its own (the tools its profile allows) and optionally
// a demanded answer shape (an output schema of the structured subset). Its
// tool calls go through the parent's pipeline, so the user's rules, hooks
// and permission prompts apply to them as to the parent's, and are shown
// through the parent's call recorder as children of the task call.
//
// The package knows neither ACP nor sessions: the agent gives it a Spec.
package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
)

// MaxCorrections is how often an answer that fails the output schema is
// sent back to the subagent before the task fails.
const MaxCorrections = 3

// DefaultMaxRequests bounds a subagent's model requests when the Spec
// gives no bound.
const DefaultMaxRequests = 50

// Spec is one subagent run.
type Spec struct {
	// Name is the profile's, shown on the cards of its calls.
	Name string
	// Parent is the task call's id: the subagent's calls are its children,
	// with ids "<Parent>:task:<n>".
	Parent   string
	Provider model.Provider
	// System is the subagent's system prompt; Run adds the output schema's
	// instructions to it.
	System string
	Prompt string
	// Tools is the subagent's scope (native mode): what its model is
	// offered and what its calls resolve in.
	Tools    *registry.Scope
	Pipeline *pipeline.Pipeline
	// Schema, when set, is the shape the answer must have.
	Schema      *registry.Structured
	MaxRequests int // 0: DefaultMaxRequests

	// NewCall makes the call the subagent's model asked for, with the
	// session's working directories and file access.
	NewCall func(id, name string, args json.RawMessage) *registry.Call
	// Start and Finish are the parent's call recorder: a call is logged
	// and shown before it enters the pipeline, its result after.
	Start  func(ctx context.Context, c *registry.Call)
	Finish func(ctx context.Context, c *registry.Call, r registry.Result)
	// Usage receives every model call's usage, which adds up in the
	// parent's.
	Usage func(ctx context.Context, u *model.Usage)
}

// Run runs the subagent until it answers without calling a tool, and
// returns its answer: the text, or with a Schema the validated value as
// compact JSON. A failure is the error the parent model reads.
func Run(ctx context.Context, s *Spec) (string, error) {
	maxReq := s.MaxRequests
	if maxReq <= 0 {
		maxReq = DefaultMaxRequests
	}
	system := s.System
	if s.Schema != nil {
		system += "\n\n" + schemaInstructions(s.Schema)
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: system}, {Role: model.RoleUser, Content: s.Prompt}}
	var tools []model.ToolSpec
	for _, d := range s.Tools.Schemas() {
		tools = append(tools, model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	n, corrections := 0, 0
	for range maxReq {
		msg, finish, err := stream(ctx, s, &model.Request{Messages: msgs, Tools: tools})
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		if err != nil {
			return "", fmt.Errorf("the subagent's model request failed: %w", err)
		}
		msgs = append(msgs, msg)
		if len(msg.ToolCalls) == 0 {
			if finish == model.FinishContentFilter {
				return "", errors.New("the subagent's model refused the task")
			}
			if s.Schema == nil {
				return msg.Content, nil
			}
			value, verr := check(s.Schema, msg.Content)
			if verr == nil {
				return value, nil
			}
			if corrections == MaxCorrections {
				return "", fmt.Errorf("the subagent's answer did not match the output schema after %d corrections: %v", MaxCorrections, verr)
			}
			corrections++
			msgs = append(msgs, model.Message{Role: model.RoleUser, Content: fmt.Sprintf(
				"Your answer does not match the output schema: %v\nAnswer again with only the JSON value.", verr)})
			continue
		}
		calls := make([]*registry.Call, len(msg.ToolCalls))
		for i, tc := range msg.ToolCalls {
			n++
			calls[i] = s.NewCall(registry.ChildID(s.Parent, "task", n), tc.Name, registry.ArgsJSON(tc.Arguments))
		}
		results := s.Pipeline.ExecuteBatch(ctx, s.Tools, calls, pipeline.Hooks{
			Logged: func(_ int, c *registry.Call) { s.Start(ctx, c) },
			Done:   func(_ int, c *registry.Call, r registry.Result) { s.Finish(ctx, c, r) },
		})
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		var extra []string
		for i, r := range results {
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: msg.ToolCalls[i].ID, Content: r.Text()})
			extra = append(extra, r.Context...)
		}
		if len(extra) > 0 {
			// Additional context follows the step's last result, as in the parent.
			msgs = append(msgs, model.Message{Role: model.RoleUser, Content: strings.Join(extra, "\n\n")})
		}
	}
	return "", fmt.Errorf("the subagent made %d model requests without finishing", maxReq)
}

// stream makes one model request. The subagent's text is not shown as it
// streams: the parent's transcript is the parent's; its answer is the task
// call's result.
func stream(ctx context.Context, s *Spec, req *model.Request) (model.Message, model.Finish, error) {
	msg := model.Message{Role: model.RoleAssistant}
	var text, thought strings.Builder
	finish := model.FinishStop
	for ev, err := range s.Provider.Stream(ctx, req) {
		if err != nil {
			return msg, "", err
		}
		switch ev.Kind {
		case model.EventText:
			text.WriteString(ev.Text)
		case model.EventThought:
			thought.WriteString(ev.Text)
		case model.EventToolCall:
			msg.ToolCalls = append(msg.ToolCalls, *ev.ToolCall)
		case model.EventFinish:
			finish = ev.Finish
		case model.EventUsage:
			if s.Usage != nil {
				s.Usage(ctx, ev.Usage)
			}
		case model.EventDiscard:
			text.Reset()
			thought.Reset()
			msg.ToolCalls = nil
		}
	}
	msg.Content, msg.Reasoning = text.String(), thought.String()
	return msg, finish, nil
}

// schemaInstructions tell the subagent the shape its answer must have.
func schemaInstructions(sch *registry.Structured) string {
	return "When you are done, your final answer must be only a JSON value (no prose around it) that validates against this JSON Schema:\n\n" +
		string(sch.Schema())
}

// check validates an answer against the schema and returns it as compact
// JSON. A fenced block (```json … ```) around the value is taken off:
// models write one even when told not to, and the value is still the one
// asked for.
func check(sch *registry.Structured, answer string) (string, error) {
	raw := strings.TrimSpace(answer)
	if strings.HasPrefix(raw, "```") && strings.HasSuffix(raw, "```") && len(raw) >= 6 {
		raw = strings.TrimSpace(raw[3 : len(raw)-3])
		raw = strings.TrimPrefix(raw, "json")
	}
	if err := sch.Validate(json.RawMessage(raw)); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return "", err
	}
	return b.String(), nil
}
