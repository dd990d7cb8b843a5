package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// The rewind benchmark: a stored session of rewindTurns turns, each an edit
// of one of rewindFiles files (every file edited rewindTurns/rewindFiles
// times), written through the session store as the agent logs it, and the
// workspace as those edits left it. Each iteration copies the fixture to
// the same place (the log names the files by absolute path), starts the
// release build over its real stdin and stdout, loads the session
// (session/load: the whole replay) and does one rewind:
//
//   - conversation: `_session/rewind` before the first prompt (the AIR
//     extension: the conversation only);
//   - files: `_session/rewind_files` before the first prompt: all 1,000
//     edits taken back, every file back to its first content;
//   - command: `/rewind 1`, both, and the answer listing 200 files;
//   - undo: `/undo`, the last prompt only (one file).
//
// Reported, medians: load-ms (session/load sent to its answer), op-ms (the
// rewind sent to its answer; for a command, the prompt sent to its
// answer), the load average before and after.
//
//	go test ./cmd/acp-bridge -run '^$' -bench BinaryRewind -benchtime 5x
//
// TestRewindFixtureRun does one iteration as a whole process (for timing
// from outside): ACP_BRIDGE_REWIND_FIXTURE names the fixture's directory
// (made on the first run), ACP_BRIDGE_REWIND_OP the operation ("none":
// the load alone).
const (
	rewindTurns = 1000
	rewindFiles = 200
)

var rewindOps = []string{"conversation", "files", "command", "undo"}

// writeRewindFixture writes the session and its workspace under fix/pristine,
// naming the files as they will be in fix/run.
func writeRewindFixture(fix string) (string, error) {
	pristine, run := filepath.Join(fix, "pristine"), filepath.Join(fix, "run")
	work := filepath.Join(pristine, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	st, err := session.OpenStore(filepath.Join(pristine, "state"), nil)
	if err != nil {
		return "", err
	}
	const id = "rewind-bench"
	lg, err := st.Create(session.Header{ID: id, Cwd: filepath.Join(run, "work")})
	if err != nil {
		return "", err
	}
	files := make([]string, rewindFiles)
	for k := range files {
		var b strings.Builder
		for i := range 40 {
			fmt.Fprintf(&b, "line %d of file %d\n", i, k)
		}
		files[k] = b.String()
	}
	lg.SetBusy(true)
	for turn := 1; turn <= rewindTurns; turn++ {
		k, j := (turn-1)%rewindFiles, (turn-1)/rewindFiles
		path := filepath.Join(run, "work", fmt.Sprintf("f%03d.txt", k))
		oldLine := fmt.Sprintf("line %d of file %d\n", j, k)
		newLine := fmt.Sprintf("line %d of file %d, edited in turn %d\n", j, k, turn)
		old := files[k]
		files[k] = strings.Replace(old, oldLine, newLine, 1)
		hunks := diffs.Compute(path, &old, files[k])
		before := diffs.VersionOf(old)
		meta, _ := json.Marshal(map[string]any{"diffs": hunks, "line": j + 1, "undo": diffs.Record(path, &before, diffs.VersionOf(files[k]), hunks)})
		args, _ := json.Marshal(map[string]any{"file_path": path, "old_string": strings.TrimSuffix(oldLine, "\n"), "new_string": strings.TrimSuffix(newLine, "\n")})
		text := fmt.Sprintf("Edit line %d of f%03d.txt", j, k)
		prompt, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
		callID := fmt.Sprintf("call_%d", turn)
		for _, p := range []session.Payload{
			session.UserMessage{Prompt: prompt, Text: text},
			session.TurnStart{Turn: turn},
			session.UserContext{},
			session.AssistantChunk{Kind: "text", Text: "Editing."},
			session.AssistantMessage{Text: "Editing.", ToolCalls: []session.MessageCall{{ID: callID, Name: "edit", Arguments: args}}},
			session.ToolCall{CallID: callID, Name: "edit", Args: args},
			session.ToolStatus{CallID: callID, Status: "running"},
			session.ToolResult{CallID: callID, Result: registry.Result{Content: []registry.Content{registry.Text("The file " + path + " has been updated successfully.")}, Meta: meta}},
			session.AssistantChunk{Kind: "text", Text: "Done."},
			session.AssistantMessage{Text: "Done."},
			session.Usage{Used: 1000 + turn*100, Size: 1 << 20},
			session.TurnEnd{Turn: turn, StopReason: "end_turn"},
		} {
			lg.Append(session.New(p))
		}
	}
	lg.SetBusy(false)
	if err := lg.Close(); err != nil {
		return "", err
	}
	for k, c := range files {
		if err := os.WriteFile(filepath.Join(work, fmt.Sprintf("f%03d.txt", k)), []byte(c), 0o644); err != nil {
			return "", err
		}
	}
	return id, os.WriteFile(filepath.Join(fix, "model.json"), []byte(`{"responses":[{"parts":[{"text":"ok"}]}]}`), 0o644)
}

// rewindFixture is the fixture in dir, written there on first use.
func rewindFixture(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err == nil {
		return "rewind-bench", nil
	}
	return writeRewindFixture(dir)
}

// rewindRun is one iteration's figures.
type rewindRun struct {
	load, op time.Duration
	answer   string // the rewind's answer, or what the command said
}

// rewindOnce copies the fixture to fix/run, starts bin on it, loads the
// session and does op.
func rewindOnce(tb testing.TB, bin, fix, id, op string) rewindRun {
	run := filepath.Join(fix, "run")
	if err := os.RemoveAll(run); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(fix, "pristine"), run).CombinedOutput(); err != nil {
		tb.Fatalf("cp: %v %s", err, out)
	}
	cmd := exec.Command(bin, "--model", "script:"+filepath.Join(fix, "model.json"), "--log-level", "error", "--state-dir", filepath.Join(run, "state"))
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+run, "HOME="+run)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	next := 0
	var said strings.Builder
	call := func(method string, params any) (json.RawMessage, time.Duration) {
		next++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": next, "method": method, "params": params})
		t0 := time.Now()
		stdin.Write(append(b, '\n'))
		for sc.Scan() {
			var m struct {
				ID     int             `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			json.Unmarshal(sc.Bytes(), &m)
			if m.Method == "session/update" && strings.Contains(string(m.Params), `"agent_message_chunk"`) {
				var p struct {
					Update struct {
						Content struct{ Text string } `json:"content"`
					} `json:"update"`
				}
				json.Unmarshal(m.Params, &p)
				said.WriteString(p.Update.Content.Text)
			}
			if m.Method == "" && m.ID == next {
				if m.Error != nil {
					tb.Fatalf("%s: %s", method, m.Error)
				}
				return m.Result, time.Since(t0)
			}
		}
		tb.Fatalf("%s: the bridge ended: %v", method, sc.Err())
		return nil, 0
	}
	air := map[string]any{"_meta": map[string]any{"jetbrains": map[string]any{"air": map[string]any{"version": 1}}}}
	call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": air})
	cwd := filepath.Join(run, "work")
	var r rewindRun
	_, r.load = call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	said.Reset()
	first := map[string]any{"messageId": "user-1"}
	var res json.RawMessage
	switch op {
	case "none":
	case "conversation":
		res, r.op = call("_session/rewind", map[string]any{"sessionId": id, "beforeMessage": first})
	case "files":
		res, r.op = call("_session/rewind_files", map[string]any{"sessionId": id, "beforeMessage": first})
	case "command", "undo":
		text := "/rewind 1"
		if op == "undo" {
			text = "/undo"
		}
		_, r.op = call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	default:
		tb.Fatalf("unknown operation %q", op)
	}
	r.answer = string(res) + said.String()
	return r
}

// rewindBin is the release build to time: ACP_BRIDGE_REWIND_BIN, else
// one built in dir (kept there for the next run).
func rewindBin(dir string) (string, error) {
	if bin := os.Getenv("ACP_BRIDGE_REWIND_BIN"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "acp-bridge")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	return bin, goBuild("", bin, ".", true)
}

func BenchmarkBinaryRewind(b *testing.B) {
	fix := b.TempDir()
	bin, err := rewindBin(fix)
	if err != nil {
		b.Fatal(err)
	}
	id, err := writeRewindFixture(fix)
	if err != nil {
		b.Fatal(err)
	}
	for _, op := range rewindOps {
		b.Run(op, func(b *testing.B) {
			load0 := loadAvg()
			var loads, ops []time.Duration
			var answer string
			for b.Loop() {
				r := rewindOnce(b, bin, fix, id, op)
				loads, ops, answer = append(loads, r.load), append(ops, r.op), r.answer
			}
			checkRewind(b, fix, op, answer)
			b.ReportMetric(ms(median(loads)), "load-ms")
			b.ReportMetric(ms(median(ops)), "op-ms")
			b.ReportMetric(load0, "load-start")
			b.ReportMetric(loadAvg(), "load-end")
		})
	}
}

// checkRewind fails when a run did not do what it was timed for.
func checkRewind(tb testing.TB, fix, op, answer string) {
	first := "line 0 of file 0\n"
	got, _ := os.ReadFile(filepath.Join(fix, "run", "work", "f000.txt"))
	restored := strings.HasPrefix(string(got), first)
	switch {
	case op == "conversation" && !strings.Contains(answer, `"rewound":true`),
		op == "files" && (!strings.Contains(answer, `"canRewind":true`) || !restored),
		op == "command" && (!strings.Contains(answer, "Files put back as they were before that prompt (200)") || !restored),
		op == "undo" && !strings.Contains(answer, "Files put back as they were before that prompt (1)"):
		tb.Fatalf("%s did not rewind: %.300s", op, answer)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestRewindFixtureRun is one iteration of BenchmarkBinaryRewind as a
// whole process, when ACP_BRIDGE_REWIND_FIXTURE names a directory; the
// figures go to the test log (-test.v).
func TestRewindFixtureRun(t *testing.T) {
	fix := os.Getenv("ACP_BRIDGE_REWIND_FIXTURE")
	if fix == "" {
		t.Skip("ACP_BRIDGE_REWIND_FIXTURE is not set")
	}
	bin, err := rewindBin(fix)
	if err != nil {
		t.Fatal(err)
	}
	id, err := rewindFixture(fix)
	if err != nil {
		t.Fatal(err)
	}
	op := os.Getenv("ACP_BRIDGE_REWIND_OP")
	if op == "" {
		op = "command"
	}
	r := rewindOnce(t, bin, fix, id, op)
	if op != "none" {
		checkRewind(t, fix, op, r.answer)
	}
	t.Logf("%s: load %v, rewind %v", op, r.load, r.op)
}
