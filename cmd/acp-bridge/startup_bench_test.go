package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The startup benchmarks build two binaries: acp-bridge, and a minimal Go
// program that reads one line and answers a canned initialize response.
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
	return bins, nil
})

// startAndInitialize starts bin, sends initialize, and waits for the answer.
// With newSession it also creates a session and returns the process's RSS
// in KiB after that answer.
func startAndInitialize(b *testing.B, bin string, newSession bool) (rssKiB int) {
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
		rssKiB = readRSS(cmd.Process.Pid)
	}
	stdin.Close()
	cmd.Wait()
	return rssKiB
}

func readRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// BenchmarkColdStartToInitialize: process start to the initialize answer,
// for acp-bridge and for a minimal Go program, in one run.
func BenchmarkColdStartToInitialize(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"minimal", "acp-bridge"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				startAndInitialize(b, bins[name], false)
			}
		})
	}
}

// BenchmarkRSSAfterSessionNew reports the resident set after session/new.
func BenchmarkRSSAfterSessionNew(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	var max int
	for b.Loop() {
		max = startAndInitialize(b, bins["acp-bridge"], true)
	}
	b.ReportMetric(float64(max)/1024, "MiB-RSS")
}
