package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/tools/fs/match/matchtest"
)

// TestEditCorpus drives the edit tool through the built binary over stdio
// with every case of the edit corpus (tools/fs/match/testdata/corpus, cases
// restated from the peers' tests). One session, one prompt per case: the
// scripted model reads the case's file and edits it; the test checks the
// file on disk, the failure (known by its sentence) of a refusal, and for a
// landed edit that the card's diff is exactly what was applied and its
// title says how a tolerant match was made. The figure is logged.
func TestEditCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cases, err := matchtest.Load()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	name := func(i int) string { return fmt.Sprintf("c%03d.txt", i) }
	for i, c := range cases {
		if err := os.WriteFile(filepath.Join(work, name(i)), []byte(c.File), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound) // the bridge may ask for the model list
			return
		}
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		last := body.Messages[len(body.Messages)-1]
		if last.Role != "user" {
			sseWrite(w, 1<<20, delta(`{"role":"assistant","content":"done"}`, "stop"))
			return
		}
		// The prompt is "case N", as a string or in a list of parts.
		b, _ := json.Marshal(last.Content)
		var i int
		if at := strings.Index(string(b), "case "); at < 0 {
			t.Errorf("prompt %s names no case", b)
			return
		} else if _, err := fmt.Sscanf(string(b[at:]), "case %d", &i); err != nil || i >= len(cases) {
			t.Errorf("prompt %s: %v", b, err)
			return
		}
		c := cases[i]
		readArgs, _ := json.Marshal(map[string]any{"file_path": name(i)})
		args := map[string]any{"file_path": name(i), "old_string": c.Old, "new_string": c.New, "replace_all": c.All}
		if c.Line > 0 {
			args["start_line"] = c.Line
		}
		editArgs, _ := json.Marshal(args)
		call := func(idx int, id, tool string, args []byte) string {
			a, _ := json.Marshal(string(args))
			return delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, idx, id, tool, a), "")
		}
		sseWrite(w, 1<<20, delta(`{"role":"assistant"}`, ""),
			call(0, fmt.Sprintf("read_%d", i), "read", readArgs),
			call(1, fmt.Sprintf("edit_%d", i), "edit", editArgs),
			delta(`{}`, "tool_calls"))
	}))
	defer srv.Close()

	cl := startE2E(t, mockEnv, mockArgs(srv, "--context-window", "1000000")...)
	sid := cl.call("session/new", map[string]any{"cwd": work, "mcpServers": []any{}})["sessionId"].(string)

	var tally matchtest.Tally
	for i, c := range cases {
		cl.notes = nil
		res := cl.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": fmt.Sprintf("case %d", i)}}})
		if res["stopReason"] != "end_turn" {
			t.Fatalf("%s: stopReason %v", c.ID(), res["stopReason"])
		}
		data, err := os.ReadFile(filepath.Join(work, name(i)))
		if err != nil {
			t.Fatal(err)
		}
		got := string(data)
		var final map[string]any
		for _, u := range cl.updates("tool_call_update") {
			if u["toolCallId"] == fmt.Sprintf("edit_%d", i) && (u["status"] == "completed" || u["status"] == "failed") {
				final = u
			}
		}
		if final == nil {
			t.Fatalf("%s: the edit has no final update", c.ID())
		}
		msg := rawText(final)
		landed := final["status"] == "completed"
		code := refusalCode(msg)
		if !landed && got != c.File {
			t.Errorf("%s: a refused edit changed the file: %q", c.ID(), got)
		}
		tally.Add(c, landed, got, code, msg)
		if !landed || got != c.Want {
			continue
		}
		title, _ := final["title"].(string)
		if c.Note != "" && !strings.Contains(title, c.Note) {
			t.Errorf("%s: card title %q does not say it matched %q", c.ID(), title, c.Note)
		}
		if c.Note == "" && strings.Contains(title, "matched") {
			t.Errorf("%s: an exact match's card title %q", c.ID(), title)
		}
		checkDiffApplied(t, c.ID(), c.File, got, final)
	}
	for _, f := range tally.Failures {
		t.Error(f)
	}
	t.Logf("edit corpus through the binary (%d cases): %s", len(cases), tally)
}

// checkDiffApplied: the card's diff, applied to the file as it was, gives
// the file as it is (line endings and the byte order mark aside, as the
// card shows them).
func checkDiffApplied(t *testing.T, id, before, after string, u map[string]any) {
	t.Helper()
	norm := func(s string) string { return strings.ReplaceAll(strings.TrimPrefix(s, "\uFEFF"), "\r\n", "\n") }
	text := norm(before)
	items, _ := u["content"].([]any)
	n := 0
	for _, it := range items {
		d, _ := it.(map[string]any)
		if d["type"] != "diff" {
			continue
		}
		n++
		oldText, _ := d["oldText"].(string)
		newText, _ := d["newText"].(string)
		if oldText == "" {
			text = newText // a whole-file diff
			continue
		}
		if !strings.Contains(text, oldText) {
			t.Errorf("%s: the diff's old text %q is not in the file %q", id, oldText, text)
			return
		}
		text = strings.Replace(text, oldText, newText, 1)
	}
	if n == 0 {
		t.Errorf("%s: the card has no diff: %v", id, u)
		return
	}
	if text != norm(after) {
		t.Errorf("%s: the diff applied gives %q, the file is %q", id, text, norm(after))
	}
}

// rawText is the text of a final update's rawOutput (a list of content
// items), which is the result the model read.
func rawText(u map[string]any) string {
	items, _ := u["rawOutput"].([]any)
	var b strings.Builder
	for _, it := range items {
		m, _ := it.(map[string]any)
		c, _ := m["content"].(map[string]any)
		t, _ := c["text"].(string)
		b.WriteString(t)
	}
	return b.String()
}

// refusalCode names the edit's failure from its text: the wire carries
// the text, not the code, so each code is known by its sentence.
func refusalCode(msg string) string {
	switch {
	case strings.HasPrefix(msg, "Error: old_string and new_string are identical"):
		return "FS_INVALID_EDIT"
	case strings.Contains(msg, "provide a more specific old_string"), strings.Contains(msg, "Include more surrounding lines in old_string to pick one"):
		return "FS_AMBIGUOUS_EDIT"
	case strings.HasPrefix(msg, "Error: old_string was not found in"):
		return "FS_EDIT_NOT_FOUND"
	}
	return ""
}
