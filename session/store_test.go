package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/google/go-cmp/cmp"
)

// clock returns a fake clock that advances one millisecond per reading.
func clock() func() time.Time {
	t := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

func newStore(t *testing.T) *Store {
	t.Helper()
	st, err := OpenStore(t.TempDir(), &StoreOptions{Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// turn is a small, realistic turn: prompt, thought, text, one tool call with
// its live output and result.
func turn(n int, prompt string) []Event {
	id := fmt.Sprintf("call_%d", n)
	return []Event{
		New(UserMessage{Prompt: json.RawMessage(`[{"type":"text","text":` + strconv.Quote(prompt) + `}]`), Text: prompt}),
		New(TurnStart{Turn: n}),
		New(UserContext{}),
		New(AssistantChunk{Kind: "thought", Text: "Let me look."}),
		New(AssistantChunk{Kind: "text", Text: "Reading."}),
		New(AssistantMessage{Text: "Reading.", Reasoning: "Let me look.",
			ToolCalls: []MessageCall{{ID: id, Name: "read", Arguments: json.RawMessage(`{"file_path":"a.go"}`)}}}),
		New(ToolCall{CallID: id, Name: "read", Args: json.RawMessage(`{"file_path":"a.go"}`)}),
		New(ToolStatus{CallID: id, Status: "running"}),
		New(ToolOutput{CallID: id, Data: "live output, never stored"}),
		New(ToolResult{CallID: id, Result: registry.Result{Content: []registry.Content{registry.Text("1: package a")}}}),
		New(AssistantChunk{Kind: "text", Text: "Done."}),
		New(TurnEnd{Turn: n, StopReason: "end_turn"}),
	}
}

func stored(evs []Event) int {
	n := 0
	for _, ev := range evs {
		if !Transient(ev.Type()) {
			n++
		}
	}
	return n
}

func TestStoreRoundTrip(t *testing.T) {
	st := newStore(t)
	h := Header{ID: "s1", Cwd: "/work/project", AdditionalDirectories: []string{"/work/lib"}}
	lg, err := st.Create(h)
	if err != nil {
		t.Fatal(err)
	}
	var live []Event
	for _, ev := range turn(1, "what does a.go do?") {
		if got := lg.Append(ev); !Transient(got.Type()) {
			live = append(live, got)
		}
	}
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	gotH, evs, err := st.Read("s1")
	if err != nil {
		t.Fatal(err)
	}
	if gotH.ID != "s1" || gotH.Cwd != h.Cwd || gotH.Version != FormatVersion || gotH.Created.IsZero() ||
		cmp.Diff(gotH.AdditionalDirectories, h.AdditionalDirectories) != "" {
		t.Errorf("header = %+v", gotH)
	}
	if cmp.Diff(evs, live) != "" {
		t.Fatalf("read back %d events, want the %d appended:\n got %v\nwant %v", len(evs), len(live), evs, live)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || ev.Type() == TypeToolOutput || ev.Time.IsZero() {
			t.Errorf("event %d: seq %d type %s time %v", i, ev.Seq, ev.Type(), ev.Time)
		}
	}

	// Reopened, the log goes on with the next sequence number in the same file.
	lg2, _, err := st.Open("s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := lg2.Events(); cmp.Diff(got, live) != "" {
		t.Fatalf("Open: events differ from the appended ones")
	}
	next := lg2.Append(New(Notice{Text: "again"}))
	if next.Seq != int64(len(live)+1) {
		t.Errorf("seq after reopen = %d, want %d", next.Seq, len(live)+1)
	}
	lg2.Close()
	_, evs, err = st.Read("s1")
	if err != nil || len(evs) != len(live)+1 {
		t.Fatalf("after reopen: %d events, err %v", len(evs), err)
	}
	raw, _ := os.ReadFile(filepath.Join(st.Dir(), "s1.jsonl"))
	if lines := bytes.Count(raw, []byte("\n")); lines != len(live)+2 {
		t.Errorf("file has %d lines, want header + %d events", lines, len(live)+1)
	}
}

func TestCreateRefusesExistingAndBadIDs(t *testing.T) {
	st := newStore(t)
	if _, err := st.Create(Header{ID: "dup", Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(Header{ID: "dup", Cwd: "/w"}); err == nil {
		t.Error("a second Create of the same id overwrote the log")
	}
	for _, id := range []string{"", "../escape", "a/b", ".hidden", strings.Repeat("x", 129), "a b"} {
		if _, err := st.Create(Header{ID: id, Cwd: "/w"}); err == nil {
			t.Errorf("Create(%q) accepted an id that is not a plain file name", id)
		}
		if _, _, err := st.Open(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

// logBytes renders a header and event lines as a log file would hold them.
func logBytes(header string, lines ...string) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, l := range lines {
		b.WriteString("\n")
		b.WriteString(l)
	}
	return b.Bytes()
}

const goodHeader = `{"type":"session","version":1,"id":"s","cwd":"/w","created":"2026-03-01T12:00:00Z"}`

func ev(seq int, typ, data string) string {
	return fmt.Sprintf(`{"seq":%d,"time":"2026-03-01T12:00:0%dZ","type":%q,"data":%s}`, seq, seq%10, typ, data)
}

func TestParse(t *testing.T) {
	e1 := ev(1, TypeUserMessage, `{"prompt":[],"text":"hi"}`)
	e2 := ev(2, TypeTurnStart, `{"turn":1}`)
	e3 := ev(3, TypeTurnEnd, `{"turn":1,"stopReason":"end_turn"}`)
	tests := []struct {
		name    string
		data    []byte
		events  int
		torn    bool   // good stops before the end of the data
		skipped string // substring of the one skipped line's reason; "" = none skipped
		wantErr string // substring; "" = no error
	}{
		{name: "header only", data: logBytes(goodHeader, ""), events: 0},
		{name: "three events", data: logBytes(goodHeader, e1, e2, e3, ""), events: 3},
		{name: "torn last line, cut mid-JSON", data: logBytes(goodHeader, e1, e2, e3[:20]), events: 2, torn: true},
		{name: "last line complete JSON but no newline", data: logBytes(goodHeader, e1, e2, e3), events: 2, torn: true},
		{name: "torn last line of zero bytes (power loss)", data: logBytes(goodHeader, e1, "\x00\x00\x00\x00"), events: 1, torn: true},
		// A complete line is never torn: it costs itself only, and the
		// file keeps it.
		{name: "undecodable last line with newline", data: logBytes(goodHeader, e1, "{\"seq\":2,", ""), events: 1, skipped: "line 3: not a JSON event"},
		{name: "garbage in the middle", data: logBytes(goodHeader, e1, "not json", e3, ""), events: 2, skipped: "line 3: not a JSON event"},
		{name: "gap in seq", data: logBytes(goodHeader, e1, e3, ""), events: 2, skipped: "events 2 to 2 are missing"},
		{name: "repeated seq", data: logBytes(goodHeader, e1, e1, ""), events: 1, skipped: "seq 1, after 1"},
		{name: "event without time", data: logBytes(goodHeader, `{"seq":1,"type":"notice","data":{"text":"x"}}`, ""), skipped: "has no time"},
		{name: "event without data", data: logBytes(goodHeader, `{"seq":1,"time":"2026-03-01T12:00:00Z","type":"notice"}`, ""), skipped: "has no data"},
		{name: "payload of the wrong shape in the middle", data: logBytes(goodHeader, e1, ev(2, TypeTurnStart, `{"turn":"one"}`), e3, ""), events: 2, skipped: "line 3: event 2 (turn/start) has a damaged payload"},
		{name: "payload of the wrong shape on the last line", data: logBytes(goodHeader, e1, ev(2, TypeTurnStart, `{"turn":"one"}`), ""), events: 1, skipped: "damaged payload"},
		{name: "unknown event type", data: logBytes(goodHeader, e1, ev(2, "hologram/projected", `{}`), e3, ""), events: 2, skipped: `type "hologram/projected"`},
		{name: "transient type persisted", data: logBytes(goodHeader, ev(1, TypeToolOutput, `{"callId":"c","data":"x"}`), ""), skipped: `"tool/output"`},
		{name: "empty file", data: nil, wantErr: "no complete header"},
		{name: "torn header", data: []byte(goodHeader[:30]), wantErr: "no complete header"},
		{name: "not a session header", data: logBytes(`{"type":"other"}`, ""), wantErr: "not a session header"},
		{name: "newer format", data: logBytes(`{"type":"session","version":2,"id":"s","cwd":"/w"}`, ""), wantErr: "format version 2"},
		{name: "relative cwd", data: logBytes(`{"type":"session","version":1,"id":"s","cwd":"w"}`, ""), wantErr: "absolute cwd"},
		{name: "id that is a path", data: logBytes(`{"type":"session","version":1,"id":"../s","cwd":"/w"}`, ""), wantErr: "valid id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, evs, good, skipped, err := Parse("test.jsonl", tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "test.jsonl") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if len(evs) != tc.events {
				t.Errorf("got %d events, want %d", len(evs), tc.events)
			}
			switch {
			case tc.skipped == "" && len(skipped) > 0:
				t.Errorf("skipped %v, want nothing", skipped)
			case tc.skipped != "" && (len(skipped) != 1 || !strings.Contains(skipped[0].Error(), tc.skipped)):
				t.Errorf("skipped %v, want one line saying %q", skipped, tc.skipped)
			case tc.skipped != "" && !strings.Contains(skipped[0].Error(), "test.jsonl"):
				t.Errorf("skipped %q does not name the file", skipped[0])
			}
			if torn := good < int64(len(tc.data)); torn != tc.torn {
				t.Errorf("good = %d of %d bytes; torn = %v, want %v", good, len(tc.data), torn, tc.torn)
			}
			if good > 0 && tc.data[good-1] != '\n' {
				t.Errorf("good = %d does not end on a line boundary", good)
			}
		})
	}
}

func TestOpenCutsTornLineBeforeAppending(t *testing.T) {
	st := newStore(t)
	lg, err := st.Create(Header{ID: "torn", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range turn(1, "hello") {
		lg.Append(e)
	}
	lg.Close()
	p := filepath.Join(st.Dir(), "torn.jsonl")
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":11,"time":"2026-03-01T12:00:00Z","type":"notice","da`)
	f.Close()

	lg, _, err = st.Open("torn")
	if err != nil {
		t.Fatalf("a torn last line must not refuse the load: %v", err)
	}
	n := len(lg.Events())
	if got := lg.Append(New(Notice{Text: "after the crash"})); got.Seq != int64(n+1) {
		t.Errorf("seq = %d, want %d", got.Seq, n+1)
	}
	lg.Close()
	_, evs, err := st.Read("torn")
	if err != nil {
		t.Fatalf("the log is unreadable after appending past a torn line: %v", err)
	}
	if len(evs) != n+1 || evs[n].Type() != TypeNotice {
		t.Errorf("got %d events (last %s), want %d ending in the notice", len(evs), evs[len(evs)-1].Type(), n+1)
	}
}

// fakeFile records what the writer does to its file.
type fakeFile struct {
	lines    []string
	syncedAt []string // the type of the last line written at each Sync
	failAt   int      // Write number that fails (1-based); 0: never
	writes   int
}

func (f *fakeFile) Write(b []byte) (int, error) {
	f.writes++
	if f.writes == f.failAt {
		return 0, errors.New("disk full")
	}
	f.lines = append(f.lines, string(b))
	return len(b), nil
}

func (f *fakeFile) Sync() error {
	var e Event
	if len(f.lines) > 0 {
		json.Unmarshal([]byte(f.lines[len(f.lines)-1]), &e)
	}
	f.syncedAt = append(f.syncedAt, e.Type())
	return nil
}

func (f *fakeFile) Close() error { return nil }

func TestSyncedAtTurnBoundariesAndToolResults(t *testing.T) {
	f := &fakeFile{}
	lg := &Log{now: clock(), w: &writer{open: func() (logFile, error) { return f, nil }, log: discard()}}
	for _, e := range turn(1, "hi") {
		lg.Append(e)
	}
	want := []string{TypeUserMessage, TypeTurnStart, TypeToolResult, TypeTurnEnd}
	if cmp.Diff(f.syncedAt, want) != "" {
		t.Errorf("synced after %v, want %v", f.syncedAt, want)
	}
	for _, l := range f.lines {
		if !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
			t.Errorf("a write is not exactly one line: %q", l)
		}
		if strings.Contains(l, TypeToolOutput) {
			t.Errorf("a transient event was written: %s", l)
		}
	}
}

func TestWriteFailureKeepsTheSessionInMemory(t *testing.T) {
	f := &fakeFile{failAt: 3}
	lg := &Log{now: clock(), w: &writer{open: func() (logFile, error) { return f, nil }, log: discard()}}
	evs := turn(1, "hi")
	for _, e := range evs {
		lg.Append(e)
	}
	if lg.Err() == nil || !strings.Contains(lg.Err().Error(), "disk full") {
		t.Errorf("Err = %v, want the write failure", lg.Err())
	}
	if got, want := len(lg.Events()), stored(evs); got != want {
		t.Errorf("in memory: %d events, want %d", got, want)
	}
	if len(f.lines) != 2 {
		t.Errorf("%d lines written; writing must stop at the first failure (a gap would corrupt the log)", len(f.lines))
	}
}

func TestList(t *testing.T) {
	st := newStore(t)
	mk := func(id, cwd string, prompts ...string) {
		lg, err := st.Create(Header{ID: id, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range prompts {
			for _, e := range turn(i+1, p) {
				lg.Append(e)
			}
		}
		lg.Close()
	}
	mk("a", "/w/one", "  \n  Explain the build\nin detail", "then more")
	mk("b", "/w/two", strings.Repeat("word ", 40))
	mk("empty", "/w/one")
	mk("c", "/w/one", "latest")
	os.WriteFile(filepath.Join(st.Dir(), "broken.jsonl"), []byte("garbage\n"), 0o600)
	os.WriteFile(filepath.Join(st.Dir(), "notes.txt"), []byte("not a log"), 0o600)

	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range infos {
		ids = append(ids, in.ID)
	}
	if want := []string{"c", "b", "a"}; cmp.Diff(ids, want) != "" {
		t.Fatalf("listed %v, want %v (most recent first; empty and broken logs left out)", ids, want)
	}
	byID := map[string]Info{}
	for _, in := range infos {
		byID[in.ID] = in
	}
	if got := byID["a"].Title; got != "Explain the build" {
		t.Errorf("title of a = %q", got)
	}
	if got := byID["b"].Title; len([]rune(got)) > TitleMax+1 || !strings.HasSuffix(got, "…") || strings.HasSuffix(got, " …") {
		t.Errorf("long title = %q", got)
	}
	if a := byID["a"]; a.Events != 2*stored(turn(1, "")) || !a.Updated.After(a.Created) || a.Cwd != "/w/one" {
		t.Errorf("summary of a = %+v", a)
	}

	// Appending to a listed session moves it to the top; the cache must see it.
	lg, _, err := st.Open("a")
	if err != nil {
		t.Fatal(err)
	}
	lg.Append(New(Notice{Text: "later"}))
	lg.Close()
	infos, _ = st.List()
	if infos[0].ID != "a" || infos[0].Events != byID["a"].Events+1 {
		t.Errorf("after an append, first = %s with %d events", infos[0].ID, infos[0].Events)
	}
	if err := st.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	infos, _ = st.List()
	if len(infos) != 2 || infos[0].ID == "a" {
		t.Errorf("after Delete: %v", infos)
	}
}

func TestTitleFrom(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fix the bug", "fix the bug"},
		{"\n\n   spaced    out \t words  \nsecond", "spaced out words"},
		{"", ""},
		{"   \n\t\n", ""},
		{strings.Repeat("ab ", 30), strings.TrimSpace(strings.Repeat("ab ", 20)) + "…"},
		{strings.Repeat("é", 100), strings.Repeat("é", 60) + "…"},
		{"<resource uri=\"x\">\nbody\n</resource>", "body"},
		{strings.Repeat("word ", 30), strings.TrimSpace(strings.Repeat("word ", 12)) + "…"},
		{"Fix the bug, then the tests, then the docs, then the changelog, then…", "Fix the bug, then the tests, then the docs, then the…"},
	}
	for _, tc := range tests {
		if got := TitleFrom(tc.in); got != tc.want {
			t.Errorf("TitleFrom(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEveryEventTypeIsKnown keeps the reader in step with the event catalog:
// every Type* constant of this package must be loadable (or transient), or a
// session holding that event could never be loaded again.
func TestEveryEventTypeIsKnown(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Type") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					typ, _ := strconv.Unquote(lit.Value)
					found++
					if !Known(typ) && !Transient(typ) {
						t.Errorf("%s: event type %s = %q has no decoder in codec.go", name, id.Name, typ)
					}
				}
			}
		}
	}
	if found < 9 {
		t.Errorf("found only %d event type constants; the scan is broken", found)
	}
}

func FuzzParse(f *testing.F) {
	e1 := ev(1, TypeUserMessage, `{"prompt":[],"text":"hi"}`)
	f.Add(logBytes(goodHeader, e1, ""))
	f.Add(logBytes(goodHeader, e1, e1[:10]))
	f.Add(logBytes(goodHeader, "", "", ""))
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, evs, good, _, err := Parse("fuzz", data)
		if good < 0 || good > int64(len(data)) {
			t.Fatalf("good = %d outside 0..%d", good, len(data))
		}
		if err != nil {
			return
		}
		var last int64
		for i, e := range evs {
			if e.Seq <= last || !Known(e.Type()) {
				t.Fatalf("accepted event %d: seq %d after %d, type %q", i, e.Seq, last, e.Type())
			}
			last = e.Seq
		}
	})
}

func TestOpenLogIsExclusive(t *testing.T) {
	st := newStore(t)
	lg, err := st.Create(Header{ID: "held", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	lg.Append(New(Notice{Text: "x"}))
	if _, _, err := st.Open("held"); !errors.Is(err, ErrBusy) {
		t.Errorf("Open of a log held open = %v, want ErrBusy", err)
	}
	if err := st.Delete("held"); !errors.Is(err, ErrBusy) {
		t.Errorf("Delete of a log held open = %v, want ErrBusy", err)
	}
	if _, _, err := st.Read("held"); err != nil {
		t.Errorf("Read of a log held open = %v; reading needs no lock", err)
	}
	lg.Close()
	lg, _, err = st.Open("held")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	lg.Close()
}

// TestDecodeEventFastPathAgrees: the direct reading of a line gives what
// encoding/json gives, and lines of any other shape still decode.
func TestDecodeEventFastPathAgrees(t *testing.T) {
	lg := &Log{now: clock()}
	var lines []string
	for _, e := range turn(1, "a \"quoted\" <prompt> with ünïcode\n and lines") {
		if e = lg.Append(e); !Transient(e.Type()) {
			b, _ := json.Marshal(e)
			lines = append(lines, string(b))
		}
	}
	others := []struct {
		line string
		fast bool
	}{
		{`{"seq":1,"time":"2026-03-01T12:00:00.5+02:00","type":"notice","data":{"text":"x"}}`, true},
		{`{ "seq": 1, "time": "2026-03-01T12:00:00Z", "type": "notice", "data": {"text": "x"} }`, false},
		{`{"time":"2026-03-01T12:00:00Z","seq":1,"type":"notice","data":{"text":"x"}}`, false},
		{`{"seq":1,"time":"2026-03-01T12:00:00Z","type":"not\u0069ce","data":{"text":"x"}}`, false},
		{`{"seq":1,"time":"2026-03-01T12:00:00Z","type":"notice","data":{"text":"x"},"extra":true}`, false},
		{`{"seq":1,"time":"2026-03-01T12:00:00Z","type":"notice","data":"text"}`, false},
	}
	for _, l := range lines {
		others = append(others, struct {
			line string
			fast bool
		}{l, true})
	}
	for _, tc := range others {
		var want wireLine
		if err := json.Unmarshal([]byte(tc.line), &want); err != nil {
			t.Fatalf("bad test line %s: %v", tc.line, err)
		}
		_, fast := decodeFast([]byte(tc.line))
		if fast != tc.fast {
			t.Errorf("fast path taken = %v, want %v, for %s", fast, tc.fast, tc.line)
		}
		got, err := decodeLine([]byte(tc.line))
		if err != nil {
			t.Errorf("decodeLine(%s): %v", tc.line, err)
			continue
		}
		var gotData, wantData any
		json.Unmarshal(got.Data, &gotData)
		json.Unmarshal(want.Data, &wantData)
		if got.Seq != want.Seq || !got.Time.Equal(want.Time) || got.Type != want.Type || cmp.Diff(gotData, wantData) != "" {
			t.Errorf("decodeLine(%s)\n got %+v\nwant %+v", tc.line, got, want)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"seq":1,"time":"2026-03-01T12:00:00Z","type":"notice","data":{"text":"x"}}`))
	f.Add([]byte(`{"seq":-1,"time":"2026-03-01T12:00:00Z","type":"a","data":{}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := decodeFast(line)
		if !ok || !json.Valid(line) {
			return
		}
		var want wireLine
		if err := json.Unmarshal(line, &want); err != nil {
			return // e.g. a seq json accepts as a number but not as int64
		}
		if fast.Seq != want.Seq || !fast.Time.Equal(want.Time) || fast.Type != want.Type || !bytes.Equal(fast.Data, want.Data) {
			t.Fatalf("fast %+v, json %+v", fast, want)
		}
	})
}

// TestFormatV1StillReads keeps logs written by format version 1 readable:
// the fixture must parse, and every payload must survive a round trip
// through its Go type, so renaming a payload field (which would silently
// drop data from old logs) fails here.
func TestFormatV1StillReads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-fixture.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h, evs, good, skipped, err := Parse("v1-fixture.jsonl", data)
	if len(skipped) > 0 {
		t.Fatalf("the fixture has damaged lines: %v", skipped)
	}
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != "v1-fixture" || h.Cwd != "/work/project" || len(h.AdditionalDirectories) != 1 || good != int64(len(data)) {
		t.Errorf("header %+v, good %d of %d", h, good, len(data))
	}
	// The fixture's lines, by sequence number, to compare with what the
	// typed payloads encode to.
	stored := map[int64]json.RawMessage{}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n"))[1:] {
		var w wireLine
		if err := json.Unmarshal(l, &w); err != nil {
			t.Fatal(err)
		}
		stored[w.Seq] = w.Data
	}
	seen := map[string]bool{}
	for _, e := range evs {
		seen[e.Type()] = true
		again, _ := json.Marshal(e.Payload)
		var want, got any
		json.Unmarshal(stored[e.Seq], &want)
		json.Unmarshal(again, &got)
		if cmp.Diff(want, got) != "" {
			t.Errorf("event %d (%s) loses data through its type:\nstored %s\nagain  %s", e.Seq, e.Type(), stored[e.Seq], again)
		}
	}
	for typ := range decoders {
		if !seen[typ] {
			t.Logf("the v1 fixture has no %s event", typ)
		}
	}
}

func TestSummarizeTitle(t *testing.T) {
	prompt := func(s string) Event {
		return Event{Seq: 1, Payload: UserMessage{Prompt: json.RawMessage(`[]`), Text: s}}
	}
	title := func(s string) Event {
		return Event{Seq: 1, Payload: Title{Title: s}}
	}
	tests := []struct {
		name string
		evs  []Event
		want string
	}{
		{"no events", nil, ""},
		{"first prompt", []Event{prompt("  "), prompt("fix the build"), prompt("then this")}, "fix the build"},
		{"the session's own title wins", []Event{prompt("fix the build"), title("Build fix")}, "Build fix"},
		{"the last title wins", []Event{title("Old"), prompt("x"), title("New name")}, "New name"},
		{"an empty title falls back", []Event{prompt("fix it"), title("")}, "fix it"},
	}
	for _, tc := range tests {
		if got := Summarize(Header{ID: "s", Cwd: "/w"}, tc.evs).Title; got != tc.want {
			t.Errorf("%s: title %q, want %q", tc.name, got, tc.want)
		}
	}
}
