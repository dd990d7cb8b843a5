package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/codemode"
	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/mapping"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

type writeArgs struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// writeTool is a small file writer that asks permission, standing in for the
// edit tools in these tests.
func writeTool() registry.Tool[writeArgs, string] {
	return registry.Tool[writeArgs, string]{
		Name:        "write_file",
		Description: "Write a file.",
		Run: func(_ context.Context, c *registry.Call, in writeArgs) (string, error) {
			p := filepath.Join(c.Cwd, in.FilePath)
			if err := os.WriteFile(p, []byte(in.Content), 0o644); err != nil {
				return "", err
			}
			return "wrote " + in.FilePath, nil
		},
		Permission: func(_ *registry.Call, in writeArgs) *registry.Permission {
			return &registry.Permission{Reason: "writes " + in.FilePath}
		},
	}
}

func toolCallPart(t *testing.T, id, name string, args any) map[string]any {
	t.Helper()
	return map[string]any{"tool_call": map[string]any{"id": id, "name": name, "arguments": args}}
}

func scriptOf(t *testing.T, responses ...[]map[string]any) *model.Script {
	t.Helper()
	var rs []map[string]any
	for _, parts := range responses {
		rs = append(rs, map[string]any{"parts": parts})
	}
	b, err := json.Marshal(map[string]any{"responses": rs})
	if err != nil {
		t.Fatal(err)
	}
	return script(t, string(b))
}

// A scripted model in code mode: a direct call to read is refused; then a
// run_code program reads a file, writes one (asking permission), handles a
// failed read, and returns. Every sub-call is its own card tied to the
// run_code card, every update is valid ACP, and the model sees only the
// program's output.
func TestCodeModeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello world\nsecond\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	program := `const text: string = await tools.read({file_path: "notes.txt"});
console.log("has hello:", text.includes("1: hello world"));
const w = await tools.write_file({file_path: "out.txt", content: "copied\n"});
let miss = "";
try { await tools.read({file_path: "missing.txt"}) } catch (e) { miss = e.toolName + ": " + e.message }
return {w, miss};`
	reg := registry.New()
	fs.Register(reg)
	registry.MustAdd(reg, writeTool())
	m := &recorder{p: scriptOf(t,
		[]map[string]any{toolCallPart(t, "call_1", "read", map[string]any{"file_path": "notes.txt"})},
		[]map[string]any{{"text": "Running a program."}, toolCallPart(t, "call_2", "run_code", map[string]any{"code": program, "description": "Copy the notes"})},
		[]map[string]any{{"text": "Done."}},
	)}
	e := newEditor(t, Options{Registry: reg, Model: m, ToolsMode: codemode.ModeCode})
	var permMu sync.Mutex
	var asked []acp.RequestPermissionRequest
	e.permission = func(r *acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		permMu.Lock()
		asked = append(asked, *r)
		permMu.Unlock()
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "allow-once"}}
	}
	sid := e.newSession(dir)
	stop, err := e.prompt(sid, "copy the notes")
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %v, %v", stop, err)
	}

	// The program ran for real.
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "copied\n" {
		t.Errorf("out.txt = %q, %v", b, err)
	}

	// The model was offered run_code only, with the rule and the SDK.
	reqs := m.requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "run_code" {
		t.Errorf("tools offered = %+v", reqs[0].Tools)
	}
	sys := reqs[0].Messages[0].Content
	for _, want := range []string{codemode.CodeOnlyRule, "## Writing code for run_code", "  read: {\n    /** The path of the file to read", "  write_file: {", "declare const tools"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	// The model sees the refusal, then the program's output only.
	var toolMsgs []string
	for _, msg := range reqs[2].Messages {
		if msg.Role == model.RoleTool {
			toolMsgs = append(toolMsgs, msg.Content)
		}
	}
	wantRun := "has hello: true\n{\n  \"w\": \"wrote out.txt\",\n  \"miss\": \"read: file not found: " + filepath.Join(dir, "missing.txt") + "\"\n}"
	if len(toolMsgs) != 2 || toolMsgs[0] != "Error: "+registry.CodeOnlyMessage("read") || toolMsgs[1] != wantRun {
		t.Errorf("tool results sent to the model:\n%q\nwant the refusal and\n%q", toolMsgs, wantRun)
	}

	// The editor saw a card per call: the refused read, run_code, and its
	// three sub-calls in submission order, each tied to run_code.
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	type card struct {
		title, status, parent string
	}
	cards := map[string]*card{}
	var order []string
	for _, u := range e.updates() {
		b, _ := json.Marshal(acp.SessionNotification{SessionID: sid, Update: u})
		if err := schema.Validate("SessionNotification", b); err != nil {
			t.Errorf("invalid update %s: %v", b, err)
		}
		switch u := u.(type) {
		case *acp.ToolCall:
			c := &card{title: u.Title, status: string(u.Status)}
			if p, ok := u.Meta["acp_bridge"].(map[string]any); ok {
				c.parent, _ = p["parentToolCallId"].(string)
			}
			cards[u.ToolCallID] = c
			order = append(order, u.ToolCallID)
		case *acp.ToolCallUpdate:
			if c := cards[u.ToolCallID]; c != nil && u.Status != nil {
				c.status = string(*u.Status)
			}
		}
	}
	wantOrder := []string{"call_1", "call_2", "call_2:code:1", "call_2:code:2", "call_2:code:3"}
	if strings.Join(order, ",") != strings.Join(wantOrder, ",") {
		t.Fatalf("cards = %v, want %v", order, wantOrder)
	}
	want := map[string]card{
		"call_1":        {title: "Read notes.txt", status: "failed"},
		"call_2":        {title: "Copy the notes", status: "completed"},
		"call_2:code:1": {title: "Read notes.txt", status: "completed", parent: "call_2"},
		"call_2:code:2": {title: "write_file", status: "completed", parent: "call_2"},
		"call_2:code:3": {title: "Read missing.txt", status: "failed", parent: "call_2"},
	}
	for id, w := range want {
		if got := *cards[id]; got != w {
			t.Errorf("card %s = %+v, want %+v", id, got, w)
		}
	}
	// The write asked permission in its own card.
	permMu.Lock()
	defer permMu.Unlock()
	if len(asked) != 1 || asked[0].ToolCall.ToolCallID != "call_2:code:2" {
		t.Errorf("permission requests = %+v", asked)
	}
	for _, r := range asked {
		b, _ := json.Marshal(r)
		if err := schema.Validate("RequestPermissionRequest", b); err != nil {
			t.Errorf("invalid permission request %s: %v", b, err)
		}
	}
}

// A rejected permission inside a program rejects that call with
// ToolCallError, and the program goes on.
func TestCodeModeRejectedSubCall(t *testing.T) {
	dir := t.TempDir()
	reg := registry.New()
	registry.MustAdd(reg, writeTool())
	program := `try { await tools.write_file({file_path: "x.txt", content: "x"}) } catch (e) { return e.name + " " + e.toolName + ": " + e.message }`
	m := &recorder{p: scriptOf(t,
		[]map[string]any{toolCallPart(t, "c1", "run_code", map[string]any{"code": program, "description": "Try a write"})},
		[]map[string]any{{"text": "ok"}},
	)}
	e := newEditor(t, Options{Registry: reg, Model: m, ToolsMode: codemode.ModeBoth})
	e.permission = func(*acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: "reject-once"}}
	}
	sid := e.newSession(dir)
	if _, err := e.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("the rejected write ran: %v", err)
	}
	reqs := m.requests()
	var names []string
	for _, ts := range reqs[0].Tools {
		names = append(names, ts.Name)
	}
	if strings.Join(names, ",") != "run_code,task,write_file" { // Schemas are sorted by name; task starts subagents
		t.Errorf("both mode offered %v", names)
	}
	if strings.Contains(reqs[0].Messages[0].Content, codemode.CodeOnlyRule) || !strings.Contains(reqs[0].Messages[0].Content, "declare const tools") {
		t.Errorf("both mode system prompt is wrong")
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Content != `ToolCallError write_file: the user rejected tool "write_file"` {
		t.Errorf("program result = %q", last.Content)
	}
}

// The tools mode is a per-session config option, changed only by logging
// the controls.
func TestToolsModeOption(t *testing.T) {
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	a, _, sid := newTestSession(t, Options{})
	s := a.sessions[sid]
	current := func() string {
		for _, o := range mapping.ConfigOptions(s.ctl.state(), false) {
			if o.ID == mapping.ConfigTools {
				b, _ := json.Marshal(o)
				if err := schema.Validate("SessionConfigOption", b); err != nil {
					t.Errorf("invalid option %s: %v", b, err)
				}
				v, _ := o.CurrentValue.(string)
				return v
			}
		}
		t.Fatal("no tools_mode option")
		return ""
	}
	if got := current(); got != "native" {
		t.Errorf("default mode = %v", got)
	}
	cases := []struct {
		value   string
		want    codemode.Mode
		wantErr bool
	}{
		{"code", codemode.ModeCode, false},
		{"both", codemode.ModeBoth, false},
		{"native", codemode.ModeNative, false},
		{"turbo", codemode.ModeNative, true},
		{"", codemode.ModeNative, true},
	}
	for _, c := range cases {
		err := s.ctl.set(t.Context(), mapping.ConfigTools, c.value)
		if (err != nil) != c.wantErr {
			t.Errorf("setControl(%q) err = %v", c.value, err)
		}
		if got := current(); got != string(c.want) {
			t.Errorf("after %q current = %v, want %s", c.value, got, c.want)
		}
		if got := s.code.get(); got != c.want {
			t.Errorf("after %q the scope's mode = %v, want %s", c.value, got, c.want)
		}
	}
	// native: run_code is not a tool at all.
	if d, err := s.scope.Resolve("run_code"); d != nil || err == nil {
		t.Errorf("native resolves run_code")
	}
}

// session/cancel while a program waits on a sub-call: the sub-call is
// cancelled and drained, run_code fails (abort), every card ends failed,
// and the prompt answers cancelled after all of it.
func TestCodeModeCancelMidRun(t *testing.T) {
	reg := registry.New()
	started := make(chan struct{})
	registry.MustAdd(reg, registry.Tool[struct{}, string]{Name: "wait", Description: "Wait until cancelled.",
		Run: func(ctx context.Context, _ *registry.Call, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			return "", ctx.Err()
		}})
	m := &recorder{p: scriptOf(t,
		[]map[string]any{toolCallPart(t, "c1", "run_code", map[string]any{"code": `console.log("waiting"); await tools.wait({})`, "description": "Wait"})},
		[]map[string]any{{"text": "never"}},
	)}
	e := newEditor(t, Options{Registry: reg, Model: m, ToolsMode: codemode.ModeCode})
	sid := e.newSession(t.TempDir())
	go func() {
		<-started
		_ = e.rpc.Notify(t.Context(), acp.MethodSessionCancel, acp.CancelNotification{SessionID: sid})
	}()
	stop, err := e.prompt(sid, "wait")
	if err != nil || stop != acp.StopCancelled {
		t.Fatalf("prompt = %v, %v", stop, err)
	}
	final := map[string]string{}
	var runText string
	for _, u := range e.updates() {
		if u, ok := u.(*acp.ToolCallUpdate); ok && u.Status != nil {
			final[u.ToolCallID] = string(*u.Status)
			if u.ToolCallID == "c1" && len(u.Content) > 1 {
				// The program stays above the result.
				if !strings.Contains(u.Content[0].Content.Text, "await tools.wait") {
					t.Errorf("the final run_code card lost its program: %q", u.Content[0].Content.Text)
				}
				runText = u.Content[1].Content.Text
			}
		}
	}
	if final["c1"] != "failed" || final["c1:code:1"] != "failed" {
		t.Errorf("final statuses = %v", final)
	}
	if runText != "Error: code run failed (abort): the run was cancelled\nCaptured output:\nwaiting" {
		t.Errorf("run_code card text = %q", runText)
	}
	if len(m.requests()) != 1 {
		t.Errorf("the model was asked again after the cancel")
	}
}

// The editor switches the tools mode per session through session/set_config_option;
// the model is then offered run_code, and the change is pushed and logged.
func TestToolsModeConfigOption(t *testing.T) {
	reg := registry.New()
	e := newEditor(t, Options{Registry: reg, Model: script(t, `{"responses":[{"parts":[{"text":"ok"}]}]}`)})
	sid := e.newSession(t.TempDir())
	var r acp.SetConfigOptionResponse
	if err := e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: sid, ConfigID: "tools_mode", Value: json.RawMessage(`"code"`)}, &r); err != nil {
		t.Fatal(err)
	}
	var got string
	for _, o := range r.ConfigOptions {
		if o.ID == "tools_mode" {
			got, _ = o.CurrentValue.(string)
		}
	}
	if got != "code" {
		t.Fatalf("tools_mode after set = %q; options %+v", got, r.ConfigOptions)
	}
	if err := e.call(acp.MethodSessionSetConfigOption, acp.SetConfigOptionRequest{SessionID: sid, ConfigID: "tools_mode", Value: json.RawMessage(`"sometimes"`)}, &r); rpcCode(err) != acp.CodeInvalidParams {
		t.Errorf("an unknown tools mode: %v", err)
	}
}

// Programs get a tool's typed value, typed by its output schema: glob's
// result is an object whose files a program can count, not text to parse.
func TestCodeModeTypedValues(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.txt", "b.txt", "c.go"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o644)
	}
	reg := registry.New()
	fs.Register(reg)
	args, _ := json.Marshal(map[string]string{
		"description": "Count the text files",
		"code":        `const r = await tools.glob({pattern: "*.txt"}); console.log(typeof r); return r.files.length;`,
	})
	e := newEditor(t, Options{Registry: reg, ToolsMode: codemode.ModeCode, Model: script(t, `{"responses":[
		{"parts":[{"tool_call":{"id":"rc","name":"run_code","arguments":`+string(args)+`}}]},
		{"parts":[{"text":"done"}]}]}`)})
	sid := e.newSession(dir)
	if _, err := e.prompt(sid, "how many?"); err != nil {
		t.Fatal(err)
	}
	var out string
	for _, u := range e.updates() {
		if u, ok := u.(*acp.ToolCallUpdate); ok && u.ToolCallID == "rc" && u.Status != nil && *u.Status == acp.StatusCompleted {
			for _, c := range u.Content {
				if c.Content != nil {
					out += c.Content.Text
				}
			}
		}
	}
	if !strings.Contains(out, "object") || !strings.Contains(out, "2") {
		t.Errorf("run_code output %q: want the typed glob value (an object with 2 files)", out)
	}
}
