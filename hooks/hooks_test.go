package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/tools/bash"
)

func TestNewChecks(t *testing.T) {
	for _, tc := range []struct {
		ev               Event
		matcher, command string
		timeout          time.Duration
		err              string
	}{
		{PreToolUse, "bash", "true", 0, ""},
		{PreToolUse, "(", "true", 0, "not a regular expression"},
		{Stop, "bash", "true", 0, "takes no matcher"},
		{"BeforeLunch", "", "true", 0, "unknown hook event"},
		{PostToolUse, "", " ", 0, "needs a command"},
		{PostToolUse, "", "x", -time.Second, "positive"},
	} {
		_, err := New(tc.ev, tc.matcher, tc.command, tc.timeout, "test")
		if got := ""; err != nil {
			got = err.Error()
			if tc.err == "" || !strings.Contains(got, tc.err) {
				t.Errorf("New(%s, %q, %q): %v, want %q", tc.ev, tc.matcher, tc.command, err, tc.err)
			}
		} else if tc.err != "" {
			t.Errorf("New(%s, %q, %q) = nil error, want %q", tc.ev, tc.matcher, tc.command, tc.err)
		}
	}
}

func TestMatcher(t *testing.T) {
	h, _ := New(PreToolUse, "edit|write", "x", 0, "")
	all, _ := New(PreToolUse, "*", "x", 0, "")
	for tool, want := range map[string]bool{"edit": true, "Write": true, "edit_file": false, "bash": false} {
		if h.Matches(tool) != want {
			t.Errorf("edit|write matches %s = %v", tool, !want)
		}
		if !all.Matches(tool) {
			t.Errorf("* does not match %s", tool)
		}
	}
}

// Run through a real shell: each row is a hook command and the outcome
// its exit status and stdout make.
func TestRun(t *testing.T) {
	if _, err := bash.Find(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		ev      Event
		command string
		timeout time.Duration
		want    Outcome
		failure string // substring of Failure
	}{
		{"silent success", PreToolUse, "exit 0", 0, Outcome{}, ""},
		{"exit 2 denies with stderr", PreToolUse, "echo 'not that file' >&2; exit 2", 0, Outcome{Decision: Deny, Reason: "not that file"}, ""},
		{"exit 2 blocks after", PostToolUse, "echo 'fix the lint' >&2; exit 2", 0, Outcome{Decision: Block, Reason: "fix the lint"}, ""},
		{"json allow", PreToolUse, `echo '{"decision":"approve"}'`, 0, Outcome{Decision: Allow}, ""},
		{"json ask", PreToolUse, `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"prod db"}}'`, 0, Outcome{Decision: Ask, Reason: "prod db"}, ""},
		{"json block before is deny", PreToolUse, `echo '{"decision":"block","reason":"no"}'`, 0, Outcome{Decision: Deny, Reason: "no"}, ""},
		{"json context", PostToolUse, `echo '{"additionalContext":"formatted"}'`, 0, Outcome{Context: "formatted"}, ""},
		{"prompt stdout is context", UserPromptSubmit, "echo branch: main", 0, Outcome{Context: "branch: main"}, ""},
		{"other status fails", PreToolUse, "echo boom >&2; exit 3", 0, Outcome{}, "exited with status 3: boom"},
		{"bad json fails", PreToolUse, "echo '{nope'", 0, Outcome{}, "not a JSON answer"},
		{"wrong decision fails", PostToolUse, `echo '{"decision":"allow"}'`, 0, Outcome{}, "which a PostToolUse hook cannot decide"},
		{"unknown decision fails", PreToolUse, `echo '{"decision":"maybe"}'`, 0, Outcome{}, "unknown decision"},
		{"timeout fails", PreToolUse, "sleep 30", 300 * time.Millisecond, Outcome{}, "did not finish within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := New(tc.ev, "", tc.command, tc.timeout, "test")
			if err != nil {
				t.Fatal(err)
			}
			got := Run(context.Background(), &h, Input{SessionID: "s1", Cwd: dir, ToolName: "bash"}, nil)
			if tc.failure != "" {
				if !strings.Contains(got.Failure, tc.failure) {
					t.Errorf("Failure = %q, want %q", got.Failure, tc.failure)
				}
				return
			}
			if got != tc.want {
				t.Errorf("Run = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A hook reads the event on stdin and runs in the session's directory
// with the project's path in its environment.
func TestRunInput(t *testing.T) {
	if _, err := bash.Find(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	h, _ := New(PostToolUse, "", `cat > seen; echo "$ACP_BRIDGE_PROJECT_DIR $(pwd)" >> seen`, 0, "test")
	o := Run(context.Background(), &h, Input{SessionID: "s1", Cwd: dir, ToolName: "read", ToolInput: json.RawMessage(`{"file_path":"a"}`),
		CallID: "c1", ToolResponse: &Response{Text: "hello", IsError: false}}, nil)
	if o.Failure != "" {
		t.Fatal(o.Failure)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	var in map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
		t.Fatalf("stdin was %q: %v", lines[0], err)
	}
	if in["hook_event_name"] != "PostToolUse" || in["tool_name"] != "read" || in["tool_call_id"] != "c1" ||
		in["tool_input"].(map[string]any)["file_path"] != "a" || in["tool_response"].(map[string]any)["text"] != "hello" {
		t.Errorf("stdin = %v", in)
	}
	if want := dir + " " + dir; strings.TrimSpace(lines[1]) != want {
		t.Errorf("env and dir = %q, want %q", lines[1], want)
	}
}
