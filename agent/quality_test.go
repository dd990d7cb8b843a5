package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitRepo(t *testing.T, dir, branch string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, args := range [][]string{{"init", "-q", "-b", branch}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// The system message of a real request carries the AGENTS.md files from
// the user's config and from the repository root down to the workspace,
// nearest last, each under its path, and the environment block.
func TestSystemMessageHasInstructionsAndEnvironment(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	ws := filepath.Join(repo, "svc")
	user := filepath.Join(root, "cfg")
	writeFile(t, filepath.Join(repo, "AGENTS.md"), "Run `make check` before finishing.\n")
	writeFile(t, filepath.Join(ws, "AGENTS.md"), "This service is Go; keep handlers small.\n")
	writeFile(t, filepath.Join(user, "AGENTS.md"), "Answer in British English.\n")
	gitRepo(t, repo, "feature-x")
	writeFile(t, filepath.Join(ws, "dirty.txt"), "uncommitted")

	ep := newEndpoint(t, func(int, *chatRequest) reply { return reply{text: "hello"} })
	e := newEditor(t, Options{Model: ep.provider(0), UserInstructionsDir: user})
	sid := e.newSession(ws)
	if _, err := e.prompt(sid, "hi"); err != nil {
		t.Fatal(err)
	}
	reqs := ep.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	sys := reqs[0].message(0)
	if sys.Role != "system" {
		t.Fatalf("first message is %q", sys.Role)
	}
	at := 0
	for _, want := range []string{
		"You are acp-bridge",
		"## " + filepath.Join(user, "AGENTS.md"), "Answer in British English.",
		"## " + filepath.Join(repo, "AGENTS.md"), "Run `make check` before finishing.",
		"## " + filepath.Join(ws, "AGENTS.md"), "This service is Go; keep handlers small.",
		"# Environment",
		"Workspace root (the working directory): " + ws,
		"Git: repository at " + repo + ", branch `feature-x`, with uncommitted changes",
	} {
		i := strings.Index(sys.Content[at:], want)
		if i < 0 {
			t.Fatalf("system message lacks %q (in order) in:\n%s", want, sys.Content)
		}
		at += i + len(want)
	}

	if _, err := e.prompt(sid, "/help"); err != nil {
		t.Fatal(err)
	}
	help := lastAgentText(e)
	for _, p := range []string{filepath.Join(user, "AGENTS.md"), filepath.Join(repo, "AGENTS.md"), filepath.Join(ws, "AGENTS.md")} {
		if !strings.Contains(help, p) {
			t.Errorf("/help does not name %s:\n%s", p, help)
		}
	}
}

// lastAgentText is the text of the agent messages after the last user message.
func lastAgentText(e *editor) string {
	var b strings.Builder
	for _, u := range e.updates() {
		switch u := u.(type) {
		case *acp.UserMessageChunk:
			b.Reset()
		case *acp.AgentMessageChunk:
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

// Consecutive requests of a session share their prefix byte for byte: the
// system prompt, the tools and every earlier message, across turns, tool
// calls and a mode change back and forth that ends where it started.
func TestRequestsShareTheirPrefix(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {}\n")
	reg := registry.New()
	fs.Register(reg)
	ep := newEndpoint(t, func(n int, req *chatRequest) reply {
		if last := req.message(len(req.Messages) - 1); last.Role == "user" {
			args, _ := json.Marshal(map[string]string{"file_path": "main.go"})
			return reply{calls: []model.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "read", Arguments: args}}}
		}
		return reply{text: fmt.Sprintf("answer %d", n)}
	})
	e := newEditor(t, Options{Model: ep.provider(0), Registry: reg, UserInstructionsDir: "-"})
	sid := e.newSession(dir)
	for i := range 5 {
		if _, err := e.prompt(sid, fmt.Sprintf("question %d", i)); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			for _, c := range []string{"/mode accept-edits", "/mode ask"} { // no effect on the prompt
				if _, err := e.prompt(sid, c); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	reqs := ep.requests()
	if len(reqs) != 10 {
		t.Fatalf("%d requests, want 10", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if err := sharedPrefix(reqs[i-1], reqs[i]); err != nil {
			t.Fatalf("request %d does not continue request %d: %v", i, i-1, err)
		}
	}
}

// Cached tokens reported by the endpoint (OpenAI's and DeepSeek's fields)
// are priced as cached input in the usage_update cost.
func TestCachedTokensInCost(t *testing.T) {
	for _, deepseek := range []bool{false, true} {
		t.Run(fmt.Sprintf("deepseek=%v", deepseek), func(t *testing.T) {
			ep := newEndpoint(t, func(int, *chatRequest) reply {
				return reply{text: "ok", prompt: 1000, cached: 800, complete: 100, deepseek: deepseek}
			})
			price := &Price{Input: 1, CachedInput: 0.1, Output: 2, Currency: "USD"}
			e := newEditor(t, Options{Models: []ModelChoice{{ID: "m", Provider: ep.provider(0), Price: price}}, UserInstructionsDir: "-"})
			sid := e.newSession(t.TempDir())
			if _, err := e.prompt(sid, "hi"); err != nil {
				t.Fatal(err)
			}
			var cost *acp.Cost
			for _, u := range e.updates() {
				if u, ok := u.(*acp.UsageUpdate); ok && u.Cost != nil {
					cost = u.Cost
				}
			}
			want := (200*1 + 800*0.1 + 100*2) / 1e6 // uncached, cached, output
			if cost == nil || math.Abs(cost.Amount-want) > 1e-12 || cost.Currency != "USD" {
				t.Fatalf("cost = %+v, want %g USD", cost, want)
			}
		})
	}
}

// /init writes a starter AGENTS.md through the write tool after the normal
// permission prompt, refuses to overwrite one, and writes nothing when the
// user says no. The next session's system message carries it.
func TestInitWritesAgentsMD(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/x\n")
	reg := registry.New()
	fs.Register(reg)
	ep := newEndpoint(t, func(int, *chatRequest) reply { return reply{text: "ok"} })
	e := newEditor(t, Options{Model: ep.provider(0), Registry: reg, UserInstructionsDir: "-"})
	asked := 0
	answer := "reject-once"
	e.permission = func(r *acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		asked++
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: answer}}
	}
	sid := e.newSession(dir)
	path := filepath.Join(dir, "AGENTS.md")

	if _, err := e.prompt(sid, "/init"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil || asked != 1 {
		t.Fatalf("rejected: asked %d times, file written: %v", asked, err == nil)
	}
	answer = "allow-once"
	if _, err := e.prompt(sid, "/init"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || asked != 2 || !strings.Contains(string(b), "`go test ./...`") {
		t.Fatalf("allowed: asked %d times, file %q, %v", asked, b, err)
	}
	if _, err := e.prompt(sid, "/init"); err != nil {
		t.Fatal(err)
	}
	if asked != 2 || !strings.Contains(lastAgentText(e), "already exists") {
		t.Fatalf("a second /init must not ask to overwrite: asked %d, said %q", asked, lastAgentText(e))
	}
	if len(ep.requests()) != 0 {
		t.Fatal("/init asked the model")
	}

	sid2 := e.newSession(dir)
	if _, err := e.prompt(sid2, "hi"); err != nil {
		t.Fatal(err)
	}
	if sys := ep.requests()[0].message(0).Content; !strings.Contains(sys, "## "+path) {
		t.Fatalf("the next session does not read the new AGENTS.md:\n%s", sys)
	}
	if _, err := e.prompt(sid2, "/tools"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastAgentText(e), path) {
		t.Fatalf("/tools does not name the instructions: %s", lastAgentText(e))
	}
}
