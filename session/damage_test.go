package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenKeepsWhatItCuts: only a torn tail (no final newline) is cut, and
// the bytes cut are kept beside the log; a complete line that does not
// decode stays in the file, costs itself only, and appending goes on after
// every sequence number the file may hold.
func TestOpenKeepsWhatItCuts(t *testing.T) {
	tests := []struct {
		name     string
		tail     string // appended to a good log of one turn
		cut      string // what .torn must hold; "" = nothing cut
		skipped  int
		keepTail bool // the tail is still in the file after Open
	}{
		{name: "torn tail", tail: `{"seq":11,"time":"2026-03-01T12:00:00Z","type":"notice","da`, cut: `{"seq":11,"time":"2026-03-01T12:00:00Z","type":"notice","da`},
		{name: "complete line of a newer version", tail: `{"seq":11,"time":"2026-03-01T12:00:00Z","type":"turn/start","data":{"turn":"eleven"}}` + "\n", skipped: 1, keepTail: true},
		{name: "complete line of an unknown type", tail: `{"seq":11,"time":"2026-03-01T12:00:00Z","type":"hologram","data":{}}` + "\n", skipped: 1, keepTail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t)
			lg, err := st.Create(Header{ID: "s", Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range turn(1, "hello") {
				lg.Append(e)
			}
			lg.Close()
			p := filepath.Join(st.Dir(), "s.jsonl")
			f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(tt.tail)
			f.Close()

			lg, _, err = st.Open("s")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(lg.Skipped()); got != tt.skipped {
				t.Errorf("%d lines skipped, want %d", got, tt.skipped)
			}
			n := len(lg.Events())
			got := lg.Append(New(Notice{Text: "after"}))
			lg.Close()
			if got.Seq <= 11 && tt.skipped > 0 {
				t.Errorf("appended seq %d, which the skipped line may hold (11)", got.Seq)
			}
			data, _ := os.ReadFile(p)
			if strings.Contains(string(data), strings.TrimSuffix(tt.tail, "\n")) != tt.keepTail {
				t.Errorf("the tail is in the file: %v, want %v", !tt.keepTail, tt.keepTail)
			}
			kept, err := os.ReadFile(p + ".torn")
			switch {
			case tt.cut == "" && err == nil:
				t.Errorf("kept %q though nothing was cut", kept)
			case tt.cut != "" && !bytes.Contains(kept, []byte(tt.cut)):
				t.Errorf("kept %q (%v), want the cut bytes %q", kept, err, tt.cut)
			}
			_, evs, err := st.Read("s")
			if err != nil || len(evs) != n+1 || evs[n].Type() != TypeNotice {
				t.Errorf("after appending: %d events, %v; want %d ending in the notice", len(evs), err, n+1)
			}
		})
	}
}

// TestListLeavesOutCopiedLogs: a log copied under another name names the
// same session in its header; listing it would show the id twice, and
// loading that id opens the original anyway.
func TestListLeavesOutCopiedLogs(t *testing.T) {
	st := newStore(t)
	lg, err := st.Create(Header{ID: "orig", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	lg.Append(New(UserMessage{Prompt: []byte(`[{"type":"text","text":"x"}]`), Text: "x"})) // a used session: listed
	lg.Close()
	data, _ := os.ReadFile(filepath.Join(st.Dir(), "orig.jsonl"))
	os.WriteFile(filepath.Join(st.Dir(), "copy.jsonl"), data, 0o600)
	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].ID != "orig" {
		t.Errorf("listed %+v, want orig once", infos)
	}
}

// TestLargePromptStoredOnce: a prompt's text is not written beside its
// blocks when it holds them, and reads back the same.
func TestLargePromptStoredOnce(t *testing.T) {
	big := strings.Repeat("twenty megabytes, in spirit. ", 40_000) // 1.16 MB
	block := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	tests := []struct {
		name string
		m    UserMessage
		once bool // the big text is in the line once
	}{
		{"one text block", UserMessage{Prompt: block([]map[string]string{{"type": "text", "text": big}}), Text: big}, true},
		{"text and an embedded resource", UserMessage{
			Prompt: block([]any{map[string]string{"type": "text", "text": "see this: "},
				map[string]any{"type": "resource", "resource": map[string]string{"uri": "file:///a", "text": big}}}),
			Text: "see this: \n<resource uri=\"file:///a\">\n" + big + "\n</resource>\n"}, true},
		{"two big blocks", UserMessage{
			Prompt: block([]map[string]string{{"type": "text", "text": big}, {"type": "text", "text": big + "!"}}),
			Text:   big + big + "!"}, true},
		{"text not holding the block", UserMessage{Prompt: block([]map[string]string{{"type": "text", "text": big}}), Text: "changed " + big[:5000]}, false},
		{"small prompt", UserMessage{Prompt: block([]map[string]string{{"type": "text", "text": "hi"}}), Text: "hi"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeEvent(Event{Seq: 1, Time: clock()(), Payload: tt.m})
			if err != nil {
				t.Fatal(err)
			}
			if tt.once && len(b) > len(tt.m.Prompt)+2048 {
				t.Errorf("line of %d bytes for a prompt of %d: stored twice", len(b), len(tt.m.Prompt))
			}
			var e Event
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatal(err)
			}
			got := e.Payload.(UserMessage)
			if got.Text != tt.m.Text || !bytes.Equal(got.Prompt, tt.m.Prompt) {
				t.Errorf("does not read back: text %d bytes, want %d", len(got.Text), len(tt.m.Text))
			}
		})
	}
	// A reference that does not fit is damage, not a silent wrong text.
	if _, err := decodePayload(TypeUserMessage, []byte(`{"prompt":[{"type":"text","text":"x"}],"text":"ab","textBlocks":[[5,0]]}`)); err == nil {
		t.Error("a reference past the text was accepted")
	}
}
