package mapping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/session"
)

// TestJobCardColour: a background job's card is a terminal like a call's:
// a client that renders a terminal gets the output as the command printed
// it, colour codes and all; one that gets a text block (the fenced console
// fallback) gets it without them, live and at the end.
func TestJobCardColour(t *testing.T) {
	const coloured = "\x1b[32mready\x1b[0m on :3000\n"
	meta, _ := json.Marshal(termMeta{Output: coloured, ExitCode: new(int)})
	evs := []session.Event{
		session.New(session.JobStart{CardID: "c1-job", Job: "job-1", Tool: "term", Args: json.RawMessage(`{"command":"npm run dev"}`)}),
		session.New(session.JobOutput{CardID: "c1-job", Data: coloured}),
		session.New(session.JobEnd{CardID: "c1-job", Job: "job-1", Status: "exit code 0", Meta: meta}),
	}
	for _, tt := range []struct {
		name     string
		o        Options
		wantCode bool // the escape code reaches the client
	}{
		{"terminal", Options{Cwd: cwd, TerminalOutput: true}, true},
		{"text fallback", Options{Cwd: cwd}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			us := run(t, tt.o, evs...)
			all := strings.Join(us, "\n")
			if !strings.Contains(all, "ready") {
				t.Fatalf("the output is not shown:\n%s", all)
			}
			if got := strings.Contains(all, `\u001b[32m`); got != tt.wantCode {
				t.Errorf("escape code sent: %v, want %v:\n%s", got, tt.wantCode, all)
			}
		})
	}
}
