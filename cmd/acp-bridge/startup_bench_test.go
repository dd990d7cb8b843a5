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

// The startup benchmarks build five binaries: acp-bridge (a development
// build and a release build); a minimal Go program that reads one line and
// answers a canned initialize response; the same program also linking
// santhosh-tekuri/jsonschema/v6, the validator the design chose, whose
// package initialiser compiles its metaschemas in every program that links
// it (the floor: "floor"); and the acp-go-sdk example agent ("sdk-example"),
// an ACP agent built on that SDK. Comparing them in one run gives the cost
// of our startup over Go's own, and over what the validator costs alone.
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
	ours, err := os.ReadFile("../../go.mod")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(minimal, "go.mod"), []byte("module minimal\n\n"+goDirective(ours)+"\n"), 0o644); err != nil {
		return nil, err
	}
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
	// The floor: the minimal program plus the validator's initialiser, in
	// a module of its own that takes this module's versions.
	floor := filepath.Join(dir, "floor")
	if err := os.MkdirAll(floor, 0o755); err != nil {
		return nil, err
	}
	floorSrc := strings.Replace(src, "import (", "import (\n\t_ \"github.com/santhosh-tekuri/jsonschema/v6\"", 1)
	if err := os.WriteFile(filepath.Join(floor, "main.go"), []byte(floorSrc), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(floor, "go.mod"), floorGoMod(ours), 0o644); err != nil {
		return nil, err
	}
	if sum, err := os.ReadFile("../../go.sum"); err == nil {
		if err := os.WriteFile(filepath.Join(floor, "go.sum"), sum, 0o644); err != nil {
			return nil, err
		}
	}
	bins["floor"] = filepath.Join(dir, "floor-bin")
	cmd = exec.Command("go", "build", "-o", bins["floor"], ".")
	cmd.Dir = floor
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("floor: %v: %s", err, out)
	}
	bins["sdk-example"] = filepath.Join(dir, "sdk-example")
	if out, err := exec.Command("go", "build", "-o", bins["sdk-example"], "github.com/coder/acp-go-sdk/example/agent").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sdk example: %v: %s", err, out)
	}
	startupDir = dir
	return bins, nil
})

// floorGoMod is the floor program's module, made from this module's
// go.mod (ours) under another name: every requirement at this module's
// version, so the validator and what selecting it needs resolve as they do
// here and this module's go.sum covers them; the ones the floor does not
// import cost nothing.
func floorGoMod(ours []byte) []byte {
	_, rest, _ := strings.Cut(string(ours), "\n") // the module line
	return []byte("module floor\n" + rest)
}

// goDirective is the go line of a go.mod.
func goDirective(gomod []byte) string {
	for l := range strings.Lines(string(gomod)) {
		if strings.HasPrefix(l, "go ") {
			return strings.TrimSpace(l)
		}
	}
	return "go 1.26"
}

// startupDir holds the startup benchmarks' binaries; TestMain removes it.
var startupDir string

// startAndInitialize starts bin, sends initialize, and waits for the answer.
// With newSession it also creates a session and returns the process's
// resident and anonymous (private: heap, stacks, runtime) memory in KiB
// after that answer.
func startAndInitialize(b *testing.B, bin string, newSession bool) (rssKiB, anonKiB int) {
	cmd := exec.Command(bin, "--log-level", "error")
	if base := filepath.Base(bin); base == "minimal-bin" || base == "floor-bin" || base == "sdk-example" {
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
// for the minimal Go program, the floor (minimal plus the validator), the
// acp-go-sdk example agent, acp-bridge as `go build` makes it, and
// acp-bridge as released, taken in turn in every iteration so all see the
// same machine; it reports each one's median, the ratios of the release
// build to the minimal program and to the floor, and the load average.
// ACP_BRIDGE_STARTUP_COMPARE names another build (say, of main) to time
// in the same turns.
//
//	go test ./cmd/acp-bridge -run '^$' -bench ColdStart -benchtime 40x
func BenchmarkColdStartToInitialize(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"minimal", "floor", "sdk-example", "acp-bridge", "release"}
	load0 := loadAvg()
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
	// Ratios iteration by iteration, then their median: the machine's speed
	// drifts between iterations, hardly within one.
	ratio := map[string]float64{}
	for _, pair := range [][2]string{{"release", "minimal"}, {"release", "floor"}, {"floor", "minimal"}, {"sdk-example", "minimal"}} {
		var rs []float64
		for i := range times[pair[0]] {
			rs = append(rs, float64(times[pair[0]][i])/float64(times[pair[1]][i]))
		}
		slices.Sort(rs)
		ratio[pair[0]+"/"+pair[1]] = rs[len(rs)/2]
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	for _, name := range names {
		b.ReportMetric(median(times[name]), name+"-ms")
	}
	b.ReportMetric(ratio["release/minimal"], "release-x-minimal")
	b.ReportMetric(ratio["release/floor"], "release-x-floor")
	b.ReportMetric(ratio["floor/minimal"], "floor-x-minimal")
	b.ReportMetric(ratio["sdk-example/minimal"], "sdk-x-minimal")
	b.ReportMetric(load0, "load-start")
	b.ReportMetric(loadAvg(), "load-end")
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
