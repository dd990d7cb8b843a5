package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// cancellingClient is an editor that cancels a request (as
// $/cancel_request does) when the agent has sent it `after` updates.
type cancellingClient struct {
	stClient
	after  int
	cancel context.CancelFunc
}

func (c *cancellingClient) SessionUpdate(ctx context.Context, id string, u acp.Update) error {
	if c.count()+1 == c.after && c.cancel != nil {
		c.cancel()
	}
	return c.stClient.SessionUpdate(ctx, id, u)
}

// A session/load cancelled in the middle of its replay answers with the
// context's error (the connection sends -32800) and leaves nothing half
// done: the session is not live, its log is byte for byte what it was
// (no seal appended) and not locked, so the next load replays it whole.
func TestCancelledLoadLeavesNothingHalfDone(t *testing.T) {
	env := newStEnv(t)
	a1, _ := env.agent(stScript(t, `{"parts":[{"text":"one"}]}`, `{"parts":[{"text":"two"}]}`), acp.ClientCapabilities{})
	id := env.newSession(a1)
	for _, p := range []string{"first", "second"} {
		if _, err := a1.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a1.CloseSession(t.Context(), &acp.CloseSessionRequest{SessionID: id}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(env.dir, id+".jsonl")
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	st, err := session.OpenStore(env.dir, &session.StoreOptions{Now: env.clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	c := &cancellingClient{after: 2, cancel: cancel}
	a2 := New(c, Options{Store: st, Now: env.clock})
	t.Cleanup(a2.Shutdown)
	if _, err := a2.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = a2.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: id, Cwd: env.cwd, McpServers: []acp.McpServer{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled load: err = %v, want the context's cancellation", err)
	}
	if n := c.count(); n != 2 {
		t.Errorf("the cancelled replay sent %d updates, want it stopped after the second", n)
	}
	if _, err := a2.session(id); err == nil {
		t.Error("the cancelled load left the session live")
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("the cancelled load changed the log:\nbefore %s\nafter  %s", before, after)
	}

	c.cancel = nil
	n := c.count()
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: id, Cwd: env.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("load after the cancelled one: %v", err)
	}
	var users []string
	for _, u := range content(c.since(n)) {
		for _, p := range []string{"first", "second"} {
			if u == userChunk(id, p) {
				users = append(users, p)
			}
		}
	}
	if len(users) != 2 {
		t.Errorf("the second load replayed the prompts %v, want both", users)
	}
}

// A session/load of a live session cancelled during its replay answers
// the same way and leaves the live session as it was.
func TestCancelledReplayOfALiveSession(t *testing.T) {
	env := newStEnv(t)
	st, err := session.OpenStore(env.dir, &session.StoreOptions{Now: env.clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	c := &cancellingClient{}
	a := New(c, Options{Store: st, Now: env.clock, Model: stScript(t, `{"parts":[{"text":"one"}]}`)})
	t.Cleanup(a.Shutdown)
	a.Initialize(t.Context(), &acp.InitializeRequest{ProtocolVersion: 1})
	id := env.newSession(a)
	if _, err := a.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err != nil {
		t.Fatal(err)
	}
	c.after, c.cancel = c.count()+1, cancel
	_, err = a.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: id, Cwd: env.cwd, McpServers: []acp.McpServer{}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled replay: err = %v", err)
	}
	if _, err := a.session(id); err != nil {
		t.Errorf("the live session is gone after a cancelled replay: %v", err)
	}
}
