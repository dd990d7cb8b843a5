package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The search benchmarks time grep and glob as an editor's user meets them:
// the release build started fresh, over its real stdin and stdout, a
// scripted model calling the tool, on a large real tree; and, in the same
// iteration, ripgrep run on the same tree with the same semantics, its
// output read through a pipe. Three bridge figures, each against rg's wall
// time (its process from start to exit, its own start-up included):
//
//   - card: the first call's card, from its tool_call_update in_progress
//     to its completed, as the editor shows it (the wait the user sees for
//     the search in a session already open; the bridge's start-up is not
//     in it, rg's is);
//   - cold: from starting the bridge's process to that completed: process
//     start, initialize, session/new, the prompt and its scripted model
//     turn, then the call (everything the bridge does against everything
//     rg does; the fair comparison of two fresh processes);
//   - again: the same call once more in the same process.
//
// The tree is ACP_BRIDGE_SEARCH_TREE, else the Go module cache (`go env
// GOMODCACHE`), which holds this module's dependencies once `go mod
// download` has run: about 9,000 files, 150 MB, Go and other sources, zip
// archives, nested .gitignore files. With neither the benchmark is skipped.
//
//	go test ./cmd/acp-bridge -run '^$' -bench 'BinaryGrep|BinaryGlob' -benchtime 7x

// searchTree is the tree the binary search benchmarks search.
func searchTree(b *testing.B) string {
	dir := os.Getenv("ACP_BRIDGE_SEARCH_TREE")
	if dir == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			b.Skipf("no tree: set ACP_BRIDGE_SEARCH_TREE (go env: %v)", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		b.Skipf("no tree at %q: set ACP_BRIDGE_SEARCH_TREE, or run go mod download", dir)
	}
	return dir
}

// searchCase is one call of the mix: the tool's arguments and the rg
// command line that does the same search.
type searchCase struct {
	name string
	tool string
	args string   // JSON arguments of the tool call
	rg   []string // rg arguments, before the root
}

// rgGrep returns the rg arguments that search as grep does: hidden files
// too, .gitignore respected also outside a git repository, line numbers,
// no colour.
func rgGrep(pattern string, more ...string) []string {
	return append([]string{"--hidden", "--no-require-git", "-n", "--no-heading", "--color", "never"}, append(more, "-e", pattern)...)
}

// searchMix is the mix of patterns models send.
var searchMix = []searchCase{
	{name: "common-then-rare", tool: "grep", args: `{"pattern":"func [A-Z]\\w*Context\\("}`, rg: rgGrep(`func [A-Z]\w*Context\(`)},
	{name: "rare-literal", tool: "grep", args: `{"pattern":"NEEDLE_\\d+"}`, rg: rgGrep(`NEEDLE_\d+`)},
	{name: "alternation", tool: "grep", args: `{"pattern":"TODO|FIXME"}`, rg: rgGrep(`TODO|FIXME`)},
	{name: "ignore-case-words", tool: "grep", args: `{"pattern":"(?i)connection refused"}`, rg: rgGrep(`(?i)connection refused`)},
	{name: "word-boundary", tool: "grep", args: `{"pattern":"\\bSprintf\\b"}`, rg: rgGrep(`\bSprintf\b`)},
	{name: "plain-string", tool: "grep", args: `{"pattern":"ParseDuration"}`, rg: rgGrep(`ParseDuration`)},
	{name: "leading-class", tool: "grep", args: `{"pattern":"[A-Z][a-z]+Schema\\("}`, rg: rgGrep(`[A-Z][a-z]+Schema\(`)},
	{name: "thousands-of-lines", tool: "grep", args: `{"pattern":"return nil, err"}`, rg: rgGrep(`return nil, err`)},
	{name: "include-go", tool: "grep", args: `{"pattern":"func \\(\\w+ \\*\\w+\\) Close\\(\\)","include":"*.go"}`, rg: rgGrep(`func \(\w+ \*\w+\) Close\(\)`, "-g", "*.go")},
}

// globMix is the glob calls, against rg --files with the same filter.
var globMix = []searchCase{
	{name: "all-go", tool: "glob", args: `{"pattern":"**/*.go"}`, rg: []string{"--hidden", "--no-require-git", "--files", "-g", "*.go"}},
	{name: "go-mod", tool: "glob", args: `{"pattern":"**/go.mod"}`, rg: []string{"--hidden", "--no-require-git", "--files", "-g", "go.mod"}},
	{name: "testdata-json", tool: "glob", args: `{"pattern":"**/testdata/**/*.json"}`, rg: []string{"--hidden", "--no-require-git", "--files", "-g", "**/testdata/**/*.json"}},
}

// BenchmarkBinaryGrep: each iteration starts the bridge, makes a session
// in the tree and runs one prompt whose scripted model calls grep twice
// (the first call of a fresh process, then the same call again), and runs
// rg on the same tree; which goes first alternates. Reported, medians: the
// first call's card (card-ms), process start to that card's completed
// (cold-ms), prompt sent to it (req-ms), the repeated call's card
// (again-ms), rg's wall (rg-ms); the ratios card, cold and again to rg
// (each taken iteration by iteration, then the median); the load average
// at the start and end.
func BenchmarkBinaryGrep(b *testing.B) { benchBinarySearch(b, searchTree(b), searchMix) }

// BenchmarkBinaryGlob is BenchmarkBinaryGrep for glob against rg --files.
func BenchmarkBinaryGlob(b *testing.B) { benchBinarySearch(b, searchTree(b), globMix) }

// BenchmarkBinaryGrepShapes is BenchmarkBinaryGrep for the regexp shapes
// of tools/fs/testdata/grep-shapes.txt (a literal word, then classes, a
// repeat and an escaped parenthesis), on a large Go tree:
// ACP_BRIDGE_SHAPES_TREE, else Go's own source.
//
//	go test ./cmd/acp-bridge -run '^$' -bench BinaryGrepShapes -benchtime 7x
func BenchmarkBinaryGrepShapes(b *testing.B) {
	root := os.Getenv("ACP_BRIDGE_SHAPES_TREE")
	if root == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Skipf("no Go tree: set ACP_BRIDGE_SHAPES_TREE (go env: %v)", err)
		}
		root = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "tools", "fs", "testdata", "grep-shapes.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var mix []searchCase
	for _, l := range strings.Split(string(data), "\n") {
		if name, pattern, ok := strings.Cut(l, "\t"); ok && !strings.HasPrefix(name, "#") {
			args, _ := json.Marshal(map[string]string{"pattern": pattern})
			mix = append(mix, searchCase{name: name, tool: "grep", args: string(args), rg: rgGrep(pattern)})
		}
	}
	benchBinarySearch(b, root, mix)
}

func benchBinarySearch(b *testing.B, root string, mix []searchCase) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg is not installed: the comparison is the point")
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		b.Skipf("no tree at %q", root)
	}
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	bin := bins["release"]
	if other := os.Getenv("ACP_BRIDGE_SEARCH_BIN"); other != "" {
		bin = other
	}
	for _, c := range mix {
		b.Run(c.name, func(b *testing.B) {
			load0 := loadAvg()
			dir := b.TempDir()
			script := filepath.Join(dir, "script.json")
			call := fmt.Sprintf(`{"parts":[{"tool_call":{"name":%q,"arguments":%s}}]}`, c.tool, c.args)
			done := `{"parts":[{"text":"done"}]}`
			os.WriteFile(script, []byte(`{"responses":[`+call+`,`+call+`,`+done+`]}`), 0o644)
			rgArgs := append(slices.Clone(c.rg), root)
			var first, cold, firstReq, again, rgT []time.Duration
			var matches string
			i := 0
			for b.Loop() {
				runRg := func() {
					cmd := exec.Command(rg, rgArgs...)
					out, _ := cmd.StdoutPipe()
					t0 := time.Now()
					if err := cmd.Start(); err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, out)
					cmd.Wait()
					rgT = append(rgT, time.Since(t0))
					_ = n
				}
				if i%2 == 0 {
					runRg()
				}
				r := searchOnce(b, bin, dir, script, root)
				first, cold, firstReq, again = append(first, r.cards[0]), append(cold, r.cold), append(firstReq, r.request), append(again, r.cards[1])
				matches = r.summary
				if i%2 == 1 {
					runRg()
				}
				i++
			}
			b.ReportMetric(msOf(first), "card-ms")
			b.ReportMetric(msOf(cold), "cold-ms")
			b.ReportMetric(msOf(firstReq), "req-ms")
			b.ReportMetric(msOf(again), "again-ms")
			b.ReportMetric(msOf(rgT), "rg-ms")
			b.ReportMetric(medianRatio(first, rgT), "card-x-rg")
			b.ReportMetric(medianRatio(cold, rgT), "cold-x-rg")
			b.ReportMetric(medianRatio(again, rgT), "again-x-rg")
			b.ReportMetric(load0, "load-start")
			b.ReportMetric(loadAvg(), "load-end")
			b.Logf("%s %s %s: %s", c.tool, c.name, c.args, matches)
		})
	}
}

// medianRatio is the median of a[i]/b[i]: pairs taken in the same
// iteration see the same machine, whose speed drifts between iterations.
func medianRatio(a, b []time.Duration) float64 {
	rs := make([]float64, len(a))
	for i := range a {
		rs[i] = float64(a[i]) / float64(b[i])
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

func msOf(ds []time.Duration) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// loadAvg is the one-minute load average.
func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

type searchRun struct {
	cards   [2]time.Duration // each call's card: in_progress to completed
	cold    time.Duration    // process start to the first card's completed
	request time.Duration    // the prompt sent to the first card's completed
	summary string           // the first line of the first call's result
}

// searchOnce starts bin, opens a session in root and runs the scripted
// prompt, timing what the editor sees.
func searchOnce(b *testing.B, bin, dir, script, root string) searchRun {
	cmd := exec.Command(bin, "--model", "script:"+script, "--log-level", "error", "--state-dir", filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	spawned := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	read := func() []byte {
		line, err := r.ReadBytes('\n')
		if err != nil {
			b.Fatalf("bridge: %v", err)
		}
		return line
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	read()
	io.WriteString(stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", root))
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	for created.Result.SessionID == "" {
		json.Unmarshal(read(), &created)
	}
	var run searchRun
	t0 := time.Now()
	io.WriteString(stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"search"}]}}`+"\n", created.Result.SessionID))
	var started time.Time
	call := 0
	for {
		line := read()
		now := time.Now()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Error  json.RawMessage `json:"error"`
			Params struct {
				Update struct {
					SessionUpdate string          `json:"sessionUpdate"`
					Status        string          `json:"status"`
					Content       json.RawMessage `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatalf("bad line %q: %v", line, err)
		}
		if string(m.ID) == "3" {
			if len(m.Error) > 0 {
				b.Fatalf("prompt: %s", line)
			}
			break
		}
		u := m.Params.Update
		if u.SessionUpdate != "tool_call_update" {
			continue
		}
		switch u.Status {
		case "in_progress":
			started = now
		case "completed", "failed":
			if u.Status == "failed" || started.IsZero() {
				b.Fatalf("call %d: %s", call, line)
			}
			run.cards[call] = now.Sub(started)
			if call == 0 {
				run.request = now.Sub(t0)
				run.cold = now.Sub(spawned)
				var content []struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				if json.Unmarshal(u.Content, &content) == nil && len(content) > 0 {
					run.summary, _, _ = strings.Cut(content[0].Content.Text, "\n")
				}
			}
			call++
			started = time.Time{}
		}
	}
	if call != 2 {
		b.Fatalf("%d calls completed, want 2", call)
	}
	return run
}
