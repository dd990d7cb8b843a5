package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
)

func listed(t *testing.T, a *Agent, filter string) map[string]acp.SessionInfo {
	t.Helper()
	out := map[string]acp.SessionInfo{}
	cursor := ""
	for {
		r, err := a.ListSessions(t.Context(), &acp.ListSessionsRequest{Archived: filter, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Sessions {
			out[s.SessionID] = s
		}
		if cursor = r.NextCursor; cursor == "" {
			return out
		}
	}
}

func protoCode(err error) int {
	var e *acp.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// A rename and an archive are events in the session's log: a live session
// shows the new title at once, the list reads both, and both survive a
// restart; an archived session is out of the default list, in "include"
// and "only", and loads as before. A stored session that is not live is
// renamed and unarchived in its log too.
func TestTitleAndArchiveSurviveARestart(t *testing.T) {
	env := newStEnv(t)
	a1, c1 := env.agent(stScript(t, `{"parts":[{"text":"one"}]}`, `{"parts":[{"text":"two"}]}`), acp.ClientCapabilities{})
	kept, archived := env.newSession(a1), env.newSession(a1)
	for _, id := range []string{kept, archived} {
		if _, err := a1.Prompt(t.Context(), &acp.PromptRequest{SessionID: id, Prompt: []acp.ContentBlock{acp.TextBlock("first prompt of " + id)}}); err != nil {
			t.Fatal(err)
		}
	}
	n := c1.count()
	r, err := a1.SetSessionTitle(t.Context(), &acp.SetSessionTitleRequest{SessionID: archived, Title: "  Old\nwork  "})
	if err != nil || r.Title != "Old work" {
		t.Fatalf("set_title: %+v, %v", r, err)
	}
	if ups := strings.Join(c1.since(n), "\n"); !strings.Contains(ups, `"sessionUpdate":"session_info_update"`) || !strings.Contains(ups, `"title":"Old work"`) {
		t.Errorf("the live session's editor was not told the new title:\n%s", ups)
	}
	if _, err := a1.ArchiveSession(t.Context(), &acp.ArchiveSessionRequest{SessionID: archived}); err != nil {
		t.Fatal(err)
	}
	check := func(a *Agent) {
		t.Helper()
		def := listed(t, a, "")
		if _, ok := def[archived]; ok || def[kept].SessionID == "" {
			t.Errorf("default list %v: want %s without the archived %s", def, kept, archived)
		}
		all := listed(t, a, acp.ArchivedInclude)
		if s := all[archived]; !s.Archived || s.Title != "Old work" {
			t.Errorf("include: the archived session lists as %+v", s)
		}
		if all[kept].Archived {
			t.Errorf("include: %s marked archived", kept)
		}
		if only := listed(t, a, acp.ArchivedOnly); len(only) != 1 || only[archived].SessionID == "" {
			t.Errorf("only: %v", only)
		}
	}
	check(a1)
	a1.Shutdown()

	a2, c2 := env.agent(stScript(t, `{"parts":[{"text":"three"}]}`), acp.ClientCapabilities{})
	check(a2)
	n = c2.count()
	if _, err := a2.LoadSession(t.Context(), &acp.LoadSessionRequest{SessionID: archived, Cwd: env.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("loading the archived session: %v", err)
	}
	if ups := strings.Join(c2.since(n), "\n"); !strings.Contains(ups, "first prompt of "+archived) || !strings.Contains(ups, `"title":"Old work"`) {
		t.Errorf("the archived session's replay lacks its prompt or its title:\n%s", ups)
	}
	// The first exchange after a rename keeps the name.
	if _, err := a2.Prompt(t.Context(), &acp.PromptRequest{SessionID: archived, Prompt: []acp.ContentBlock{acp.TextBlock("a new question")}}); err != nil {
		t.Fatal(err)
	}
	if s := listed(t, a2, acp.ArchivedOnly)[archived]; s.Title != "Old work" {
		t.Errorf("after a prompt the title is %q", s.Title)
	}

	// Not live: renamed and unarchived in the stored log.
	if _, err := a2.SetSessionTitle(t.Context(), &acp.SetSessionTitleRequest{SessionID: kept, Title: "Kept"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a2.UnarchiveSession(t.Context(), &acp.ArchiveSessionRequest{SessionID: archived}); err != nil {
		t.Fatal(err)
	}
	a2.Shutdown()
	a3, _ := env.agent(nil, acp.ClientCapabilities{})
	def := listed(t, a3, "")
	if def[kept].Title != "Kept" || def[archived].SessionID == "" || def[archived].Archived {
		t.Errorf("after the third start the list is %+v", def)
	}

	for _, tt := range []struct {
		name string
		err  error
		code int
	}{
		{"unknown session", func() error {
			_, err := a3.SetSessionTitle(t.Context(), &acp.SetSessionTitleRequest{SessionID: "nope", Title: "x"})
			return err
		}(), acp.CodeResourceNotFound},
		{"archive unknown", func() error {
			_, err := a3.ArchiveSession(t.Context(), &acp.ArchiveSessionRequest{SessionID: "nope"})
			return err
		}(), acp.CodeResourceNotFound},
		{"empty title", func() error {
			_, err := a3.SetSessionTitle(t.Context(), &acp.SetSessionTitleRequest{SessionID: kept, Title: " \n "})
			return err
		}(), acp.CodeInvalidParams},
		{"bad filter", func() error {
			_, err := a3.ListSessions(t.Context(), &acp.ListSessionsRequest{Archived: "maybe"})
			return err
		}(), acp.CodeInvalidParams},
	} {
		if got := protoCode(tt.err); got != tt.code {
			t.Errorf("%s: err %v, want code %d", tt.name, tt.err, tt.code)
		}
	}
}
