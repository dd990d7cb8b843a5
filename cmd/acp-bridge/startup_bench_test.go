package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The startup benchmarks build three binaries: acp-bridge (a development
// build and a release build), and a minimal Go program that reads one line and answers a canned initialize response.
// Comparing the two in one run gives the cost of our startup over Go's own.
var buildStartupBins = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "acp-bridge-startup-")
	if err != nil {
		return nil, err
	}
	minimal := filepath.Join(dir, "minimal")
	if err := os.MkdirAll(minimal, 0o755); err != nil {
		return nil, err
	}
	src := `package main

import (
	"bufio"
	"os"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	r.ReadBytes('\n')
	os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":1}}\n")
	r.ReadBytes('\n')
}
`
	if err := os.WriteFile(filepath.Join(minimal, "main.go"), []byte(src), 0o644); err != nil {
		return nil, err
	}
	os.WriteFile(filepath.Join(minimal, "go.mod"), []byte("module minimal\n\ngo 1.26\n"), 0o644)
	bins := map[string]string{"minimal": filepath.Join(dir, "minimal-bin"), "acp-bridge": filepath.Join(dir, "acp-bridge")}
	cmd := exec.Command("go", "build", "-o", bins["minimal"], ".")
	cmd.Dir = minimal
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	if out, err := exec.Command("go", "build", "-o", bins["acp-bridge"], ".").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	// What users install: built as internal/release builds the archives
	// (static, stripped), which loads faster than a development build.
	bins["release"] = filepath.Join(dir, "acp-bridge-release")
	rel := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bins["release"], ".")
	rel.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := rel.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	startupDir = dir
	return bins, nil
})

// startupDir holds the startup benchmarks' binaries; TestMain removes it.
var startupDir string

// startAndInitialize starts bin, sends initialize, and waits for the answer.
// With newSession it also creates a session and returns the process's
// resident and anonymous (private: heap, stacks, runtime) memory in KiB
// after that answer.
func startAndInitialize(b *testing.B, bin string, newSession bool) (rssKiB, anonKiB int) {
	cmd := exec.Command(bin, "--log-level", "error")
	if strings.HasSuffix(bin, "minimal-bin") {
		cmd = exec.Command(bin)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	if _, err := r.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	if newSession {
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`+"\n")
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
		rssKiB, anonKiB = readStatus(cmd.Process.Pid, "VmRSS:"), readStatus(cmd.Process.Pid, "RssAnon:")
	}
	stdin.Close()
	cmd.Wait()
	return rssKiB, anonKiB
}

// readStatus reads one KiB figure of /proc/PID/status.
func readStatus(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// BenchmarkColdStartToInitialize: process start to the initialize answer,
// for a minimal Go program, acp-bridge as `go build` makes it, and
// acp-bridge as released, taken in turn in every iteration so all see the
// same machine; it reports each one's median and the difference. ACP_BRIDGE_STARTUP_COMPARE names another build
// (say, of main) to time in the same turns.
//
//	go test ./cmd/acp-bridge -run '^$' -bench ColdStart -benchtime 40x
func BenchmarkColdStartToInitialize(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"minimal", "acp-bridge", "release"}
	if other := os.Getenv("ACP_BRIDGE_STARTUP_COMPARE"); other != "" {
		bins["compare"] = other
		names = append(names, "compare")
	}
	times := map[string][]time.Duration{}
	for b.Loop() {
		for _, name := range names {
			t0 := time.Now()
			startAndInitialize(b, bins[name], false)
			times[name] = append(times[name], time.Since(t0))
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	for _, name := range names {
		b.ReportMetric(median(times[name]), name+"-ms")
	}
	b.ReportMetric(median(times["acp-bridge"])-median(times["minimal"]), "over-minimal-ms")
}

// BenchmarkRSSAfterSessionNew reports the resident set after session/new
// and its anonymous part, the process's own memory (the rest is the
// binary's mapped pages).
func BenchmarkRSSAfterSessionNew(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	var rss, anon int
	for b.Loop() {
		r, a := startAndInitialize(b, bins["acp-bridge"], true)
		rss, anon = max(rss, r), max(anon, a)
	}
	b.ReportMetric(float64(rss)/1024, "MiB-RSS")
	b.ReportMetric(float64(anon)/1024, "MiB-anon")
}
