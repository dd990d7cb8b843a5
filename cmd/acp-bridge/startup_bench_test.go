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

	"github.com/acp-bridge/acp-bridge/internal/staletmp"
)

// The startup benchmarks build six binaries: acp-bridge (a development
// build and a release build); a minimal Go program that reads one line and
// answers a canned initialize response; the same program also linking
// santhosh-tekuri/jsonschema/v6, the validator the design chose, whose
// package initialiser compiles its metaschemas in every program that links
// it (the floor: "floor"); the minimal program linking every package this
// module's packages import from outside it, standard library included
// ("deps": every package initialiser the bridge runs except its own, and
// nothing of its own); and the acp-go-sdk example agent ("sdk-example"),
// an ACP agent built on that SDK. Comparing them in one run gives the cost
// of our startup over Go's own, over what the validator costs alone, and
// over what the linked dependencies cost.
//
// ACP_BRIDGE_BENCH_DIR names a directory to build them in and keep, so
// that several runs of the benchmarks (scripts/bench-user.sh) build once;
// without it they go in a temporary directory removed at the end.
var buildStartupBins = sync.OnceValues(func() (map[string]string, error) {
	dir := os.Getenv("ACP_BRIDGE_BENCH_DIR")
	if dir == "" {
		var err error
		if dir, err = staletmp.MkdirTemp("acp-bridge-startup-"); err != nil {
			return nil, err
		}
		startupDir = dir
	} else if bins, err := keptBins(dir); err == nil {
		return bins, nil
	}
	bins := map[string]string{}
	for name, file := range startupNames {
		bins[name] = filepath.Join(dir, file)
	}
	// acp-bridge as `go build` makes it, and as users install it: built as
	// internal/release builds the archives (static, stripped), which loads
	// faster. The programs it is compared with are built the same way.
	if err := goBuild("", bins["acp-bridge"], ".", false); err != nil {
		return nil, err
	}
	if err := goBuild("", bins["release"], ".", true); err != nil {
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
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		return nil, err
	}
	sum, _ := os.ReadFile("../../go.sum")
	// The floor: the validator's initialiser, in a module of its own that
	// takes this module's versions. deps: every package a package of this
	// module linked into acp-bridge imports from outside the module.
	floorSrc := strings.Replace(src, "import (", "import (\n\t_ \"github.com/santhosh-tekuri/jsonschema/v6\"", 1)
	depsSrc, err := depsProgram(src)
	if err != nil {
		return nil, err
	}
	// A module of this module's requirements, at its versions, under
	// another name: what the programs import resolves as it does here and
	// this module's go.sum covers it; the rest costs nothing.
	thisMod := func(name string) string {
		return strings.Replace(string(mod), "module github.com/acp-bridge/acp-bridge", "module "+name, 1)
	}
	for _, p := range []struct{ name, src, mod string }{
		{"minimal", src, "module minimal\n\n" + goDirective(mod) + "\n"},
		{"floor", floorSrc, thisMod("floor")},
		{"deps", depsSrc, thisMod("deps")},
	} {
		pdir := filepath.Join(dir, p.name)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return nil, err
		}
		for file, data := range map[string][]byte{"main.go": []byte(p.src), "go.mod": []byte(p.mod), "go.sum": sum} {
			if err := os.WriteFile(filepath.Join(pdir, file), data, 0o644); err != nil {
				return nil, err
			}
		}
		if err := goBuild(pdir, bins[p.name], ".", true); err != nil {
			return nil, fmt.Errorf("%s: %v", p.name, err)
		}
	}
	if err := goBuild("", bins["sdk-example"], "github.com/coder/acp-go-sdk/example/agent", true); err != nil {
		return nil, fmt.Errorf("sdk example: %v", err)
	}
	return bins, nil
})

// goBuild builds pkg into out, in dir (this package's when empty); with
// release, as internal/release builds the archives.
func goBuild(dir, out, pkg string, release bool) error {
	args := []string{"build", "-o", out}
	if release {
		args = append(args, "-trimpath", "-ldflags", "-s -w")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if release {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if dir != "" {
		cmd.Env = append(cmd.Env, "GOFLAGS=-mod=mod")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// depsProgram is src also blank-importing every package that a package of
// this module linked into acp-bridge imports from outside the module: all
// the initialisers the bridge runs but its own.
func depsProgram(src string) (string, error) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/acp-bridge/acp-bridge"}}{{join .Imports "\n"}}{{end}}{{end}}`, ".").Output()
	if err != nil {
		return "", fmt.Errorf("deps: go list: %v", err)
	}
	var imports []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/acp-bridge/acp-bridge") && p != "bufio" && p != "os" {
			imports = append(imports, "\t_ \""+p+"\"")
		}
	}
	slices.Sort(imports)
	return strings.Replace(src, "import (", "import (\n"+strings.Join(slices.Compact(imports), "\n"), 1), nil
}

// startupNames are the binaries buildStartupBins makes, by name.
var startupNames = map[string]string{
	"minimal": "minimal-bin", "floor": "floor-bin", "deps": "deps-bin", "sdk-example": "sdk-example",
	"acp-bridge": "acp-bridge", "release": "acp-bridge-release",
}

// keptBins is the binaries a previous run built in dir, if all are there.
func keptBins(dir string) (map[string]string, error) {
	bins := map[string]string{}
	for name, file := range startupNames {
		p := filepath.Join(dir, file)
		if _, err := os.Stat(p); err != nil {
			return nil, err
		}
		bins[name] = p
	}
	return bins, nil
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
	if base := filepath.Base(bin); base == "minimal-bin" || base == "floor-bin" || base == "deps-bin" || base == "sdk-example" {
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
// for the minimal Go program, the floor (minimal plus the validator), deps
// (minimal plus every package the bridge links but its own), the
// acp-go-sdk example agent, acp-bridge as `go build` makes it, and
// acp-bridge as released, taken in turn in every iteration so all see the
// same machine; it reports each one's median, the ratios of the release
// build to the minimal program, the floor and deps, and the load average.
// ACP_BRIDGE_STARTUP_COMPARE names another build (say, of main) to time
// in the same turns.
//
//	go test ./cmd/acp-bridge -run '^$' -bench ColdStart -benchtime 40x
func BenchmarkColdStartToInitialize(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"minimal", "floor", "deps", "sdk-example", "acp-bridge", "release"}
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
	pairs := [][2]string{{"release", "minimal"}, {"release", "floor"}, {"release", "deps"}, {"floor", "minimal"}, {"deps", "minimal"}, {"sdk-example", "minimal"}}
	if bins["compare"] != "" {
		pairs = append(pairs, [2]string{"compare", "minimal"})
	}
	for _, pair := range pairs {
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
	b.ReportMetric(ratio["release/deps"], "release-x-deps")
	b.ReportMetric(ratio["floor/minimal"], "floor-x-minimal")
	b.ReportMetric(ratio["deps/minimal"], "deps-x-minimal")
	if bins["compare"] != "" {
		b.ReportMetric(ratio["compare/minimal"], "compare-x-minimal")
	}
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
