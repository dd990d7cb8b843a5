package mapping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

func TestCompactionUpdates(t *testing.T) {
	evs := []session.Payload{
		session.Compaction{ID: "c1", Status: session.CompactionInProgress, Reason: session.CompactThreshold},
		session.CompactionChunk{ID: "c1", Text: "The user wants "},
		session.CompactionChunk{ID: "c1", Text: "a parser."},
		session.Compaction{ID: "c1", Status: session.CompactionCompleted, Reason: session.CompactThreshold, Summary: "The user wants a parser.", Kept: 4, Replaced: 10},
		session.Compaction{ID: "c2", Status: session.CompactionInProgress, Reason: session.CompactManual},
		session.Compaction{ID: "c2", Status: session.CompactionFailed, Reason: session.CompactManual, Error: "HTTP 500"},
		session.Compaction{ID: "c3", Status: session.CompactionInProgress, Reason: session.CompactManual},
		session.Compaction{ID: "c3", Status: session.CompactionCancelled, Reason: session.CompactManual},
		session.Compaction{ID: "c4", Status: session.CompactionInProgress, Reason: session.CompactManual},
		session.CompactionChunk{ID: "c4", Text: "S"},
		session.Compaction{ID: "c4", Status: session.CompactionCompleted, Reason: session.CompactManual, Summary: "S"},
		session.Prune{Before: 3, MaxChars: 100, Count: 1},
		session.SystemPrompt{Text: "sys"},
	}
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{"client shows compactions", Options{Compaction: true}, []string{
			`{"compactionId":"c1","status":"in_progress"}`,
			`{"compactionId":"c1","content":{"type":"text","text":"The user wants "}}`,
			`{"compactionId":"c1","content":{"type":"text","text":"a parser."}}`,
			`{"compactionId":"c1","status":"completed"}`,
			`{"compactionId":"c2","status":"in_progress"}`,
			`{"compactionId":"c2","status":"failed","error":"HTTP 500"}`,
			`{"compactionId":"c3","status":"in_progress"}`,
			`{"compactionId":"c3","status":"cancelled"}`,
			`{"compactionId":"c4","status":"in_progress"}`,
			`{"compactionId":"c4","content":{"type":"text","text":"S"}}`,
			`{"compactionId":"c4","status":"completed"}`,
		}},
		{"agent text otherwise", Options{}, []string{
			"nearly full", "Summarised 10 earlier messages; the last 4 stay as they were.",
			"Compacting the context", "Compaction failed, the context is unchanged: HTTP 500",
			"Compacting the context", "Compaction cancelled; the context is unchanged.",
			"Compacting the context", "Compacted the context into this summary:\n\nS",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(nil, tt.o)
			var got []string
			for _, p := range evs {
				for _, u := range tr.Translate(session.New(p)) {
					b, _ := json.Marshal(u)
					got = append(got, string(b))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d updates, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], strings.ReplaceAll(w, "\n", `\n`)) {
					t.Errorf("update %d = %s\nwant it to contain %s", i, got[i], w)
				}
			}
		})
	}
}

func TestCompactionFailureIsANoticeWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		status string
		want   string // the update's kind
	}{
		{"notices, failed", Options{Notices: true}, session.CompactionFailed, "notice"},
		{"notices, cancelled", Options{Notices: true}, session.CompactionCancelled, "notice"},
		{"notices, in progress", Options{Notices: true}, session.CompactionInProgress, "agent_message_chunk"},
		{"neither, failed", Options{}, session.CompactionFailed, "agent_message_chunk"},
		{"compaction wins", Options{Notices: true, Compaction: true}, session.CompactionFailed, "compaction_update"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			us := New(nil, tc.o).compaction(session.Compaction{ID: "c1", Status: tc.status, Error: "boom"})
			if len(us) != 1 {
				t.Fatalf("got %d updates", len(us))
			}
			var got string
			switch us[0].(type) {
			case acp.Notice:
				got = "notice"
			case acp.AgentMessageChunk:
				got = "agent_message_chunk"
			case acp.CompactionUpdate:
				got = "compaction_update"
			}
			if got != tc.want {
				t.Fatalf("got %T, want %s", us[0], tc.want)
			}
		})
	}
}
