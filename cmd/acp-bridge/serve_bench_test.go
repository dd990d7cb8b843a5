package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The load run of `acp-bridge serve` (BENCHMARKS.md, "Remote"): conns
// clients at once, each with its own session, each running one prompt
// against a local mock model that streams stampedChunks chunks stamped
// with the time it wrote them; a client subtracts the stamp from the time
// it read the chunk. The same client runs over stdio (one bridge, one
// connection, the same number of sessions at once), over WebSocket and
// over Streamable HTTP, each against the real binary:
//
//	go test -run '^$' -bench BenchmarkServeLoad -benchtime 3x ./cmd/acp-bridge
//	go test -run '^$' -bench BenchmarkServeIdle -benchtime 1x ./cmd/acp-bridge

const stampedChunks = 20

// stampModel is the mock model: each response streams stampedChunks text
// chunks "[i@unixnano]", 5 ms apart.
func stampModel() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range stampedChunks {
			io.WriteString(w, "data: "+delta(fmt.Sprintf(`{"role":"assistant","content":"[%d@%d] "}`, i, time.Now().UnixNano()), "")+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
		io.WriteString(w, "data: "+delta(`{}`, "stop")+"\n\ndata: [DONE]\n\n")
	}))
}

var stampRE = regexp.MustCompile(`@(\d+)\]`)

// peer is one client connection: send writes a message, in delivers what
// the agent sent (decoded), closed when the connection ends.
type peer struct {
	send        func([]byte) error
	in          chan loadMsg
	close       func()
	openSession func(id string) error // Streamable HTTP: open the session's stream
	pid         int                   // stdio: the bridge's
}

type loadMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	at     time.Time
}

func decodeLoad(b []byte) (loadMsg, bool) {
	var m loadMsg
	m.at = time.Now()
	return m, json.Unmarshal(b, &m) == nil
}

// stdioPeer is a bridge on stdio.
func stdioPeer(bin string, args ...string) (*peer, error) {
	cmd := exec.Command(bin, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &peer{in: make(chan loadMsg, 4096), pid: cmd.Process.Pid}
	var mu sync.Mutex
	p.send = func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := stdin.Write(append(b, '\n'))
		return err
	}
	p.close = func() { stdin.Close(); cmd.Wait() }
	go func() {
		defer close(p.in)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if m, ok := decodeLoad(line); ok {
				p.in <- m
			}
			if err != nil {
				return
			}
		}
	}()
	return p, nil
}

// wsPeer is a WebSocket connection to a served bridge.
func wsPeer(url, token string) (*peer, error) {
	ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}},
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 24)
	p := &peer{in: make(chan loadMsg, 1024)}
	p.send = func(b []byte) error { return ws.Write(context.Background(), websocket.MessageText, b) }
	p.close = func() { ws.Close(websocket.StatusNormalClosure, "") }
	go func() {
		defer close(p.in)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			if m, ok := decodeLoad(b); ok {
				p.in <- m
			}
		}
	}()
	return p, nil
}

// httpPeer is a Streamable HTTP connection: POSTs out, SSE streams in
// (the connection's, and each session's once its id is known).
func httpPeer(url, token string, client *http.Client) (*peer, error) {
	p := &peer{in: make(chan loadMsg, 1024)}
	var connID string
	ctx, cancel := context.WithCancel(context.Background())
	var streams sync.WaitGroup
	post := func(b []byte, session string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if connID != "" {
			req.Header.Set("Acp-Connection-Id", connID)
		}
		if session != "" {
			req.Header.Set("Acp-Session-Id", session)
		}
		return client.Do(req)
	}
	open := func(session string) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Acp-Connection-Id", connID)
		if session != "" {
			req.Header.Set("Acp-Session-Id", session)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			resp.Body.Close()
			return fmt.Errorf("GET stream: %d", resp.StatusCode)
		}
		streams.Go(func() {
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 1<<16)
			for {
				line, err := r.ReadBytes('\n')
				if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
					if m, ok := decodeLoad(data); ok {
						p.in <- m
					}
				}
				if err != nil {
					return
				}
			}
		})
		return nil
	}
	p.send = func(b []byte) error {
		var m loadMsg
		json.Unmarshal(b, &m)
		if connID == "" { // initialize: the answer is the body
			resp, err := post(b, "")
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			connID = resp.Header.Get("Acp-Connection-Id")
			if connID == "" {
				return fmt.Errorf("initialize: %d %s", resp.StatusCode, body)
			}
			if err := open(""); err != nil {
				return err
			}
			if m, ok := decodeLoad(body); ok {
				p.in <- m
			}
			return nil
		}
		var params struct {
			SessionID string `json:"sessionId"`
		}
		var env struct {
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(b, &env)
		json.Unmarshal(env.Params, &params)
		resp, err := post(b, params.SessionID)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return fmt.Errorf("POST: %d", resp.StatusCode)
		}
		return nil
	}
	p.close = func() {
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Acp-Connection-Id", connID)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
		cancel()
		go func() { streams.Wait(); close(p.in) }()
	}
	// The session stream opens when session/new answers (openSession).
	p.openSession = open
	return p, nil
}

// dispatcher routes a peer's messages: answers by id, chunks by session.
type dispatcher struct {
	mu      sync.Mutex
	answers map[string]chan loadMsg
	chunks  map[string]chan loadMsg
}

func dispatch(p *peer) *dispatcher {
	d := &dispatcher{answers: map[string]chan loadMsg{}, chunks: map[string]chan loadMsg{}}
	go func() {
		for m := range p.in {
			d.mu.Lock()
			switch {
			case m.Method == "session/update" && m.Params.Update.SessionUpdate == "agent_message_chunk":
				if ch := d.chunks[m.Params.SessionID]; ch != nil {
					ch <- m
				}
			case m.Method == "" && len(m.ID) > 0:
				if ch := d.answers[string(m.ID)]; ch != nil {
					ch <- m
				}
			}
			d.mu.Unlock()
		}
	}()
	return d
}

func (d *dispatcher) call(p *peer, id int, method string, params any) (loadMsg, error) {
	ch := make(chan loadMsg, 1)
	key := strconv.Itoa(id)
	d.mu.Lock()
	d.answers[key] = ch
	d.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := p.send(b); err != nil {
		return loadMsg{}, err
	}
	select {
	case m := <-ch:
		if len(m.Error) > 0 {
			return m, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m, nil
	case <-time.After(2 * time.Minute):
		return loadMsg{}, fmt.Errorf("%s: no answer in 2 minutes", method)
	}
}

// turn opens a session on p and runs one prompt, returning each stamped
// chunk's latency (read time minus the model's write time).
func (d *dispatcher) turn(p *peer, base int, cwd string) ([]time.Duration, error) {
	m, err := d.call(p, base, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		return nil, err
	}
	var res struct{ SessionID string }
	json.Unmarshal(m.Result, &res)
	if p.openSession != nil {
		if err := p.openSession(res.SessionID); err != nil {
			return nil, err
		}
	}
	chunks := make(chan loadMsg, 1024)
	d.mu.Lock()
	d.chunks[res.SessionID] = chunks
	d.mu.Unlock()
	if _, err := d.call(p, base+1, "session/prompt", map[string]any{"sessionId": res.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "stream"}}}); err != nil {
		return nil, err
	}
	var lat []time.Duration
	for {
		select {
		case c := <-chunks:
			for _, s := range stampRE.FindAllStringSubmatch(c.Params.Update.Content.Text, -1) {
				ns, _ := strconv.ParseInt(s[1], 10, 64)
				lat = append(lat, c.at.Sub(time.Unix(0, ns)))
			}
		default:
			return lat, nil
		}
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkServeLoad: "200x1" is 200 clients at once, one prompt each;
// "1x20" one client, 20 prompts one after the other (the transport's own
// cost, without 200 turns competing for the CPU). Each b.N round runs
// stdio, WebSocket and Streamable HTTP in turn, so a machine whose load
// drifts weighs on all three alike; the metrics are each transport's
// per-chunk latency (p50, p99) over all rounds and its mean wall time.
func BenchmarkServeLoad(b *testing.B) {
	bin := bridgeBinaryB(b)
	model := stampModel()
	defer model.Close()
	transports := []string{"stdio", "websocket", "http"}
	for _, shape := range []struct {
		name         string
		conns, turns int
	}{{"200x1", 200, 1}, {"1x20", 1, 20}} {
		b.Run(shape.name, func(b *testing.B) {
			lat, wall := map[string][]time.Duration{}, map[string]time.Duration{}
			for range b.N {
				for _, tr := range transports {
					l, w := loadRun(b, bin, model.URL, tr, shape.conns, shape.turns)
					lat[tr] = append(lat[tr], l...)
					wall[tr] += w
				}
			}
			for _, tr := range transports {
				b.ReportMetric(float64(percentile(lat[tr], 0.5).Microseconds()), tr+"-p50-µs/chunk")
				b.ReportMetric(float64(percentile(lat[tr], 0.99).Microseconds()), tr+"-p99-µs/chunk")
				b.ReportMetric(wall[tr].Seconds()/float64(b.N), tr+"-s/run")
			}
		})
	}
}

// loadRun is one run through the binary: conns clients at once (each a
// connection of its own; over stdio one bridge, one connection, conns
// sessions), each running turns prompts one after the other. It returns
// every stamped chunk's latency and the run's wall time; a turn that
// fails or a chunk that is missing fails the benchmark.
func loadRun(b *testing.B, bin, modelURL, transport string, conns, turns int) ([]time.Duration, time.Duration) {
	work, state := b.TempDir(), b.TempDir()
	os.Setenv("KEY_E2E", "sk-e2e")
	os.Setenv("ACP_BRIDGE_STATE_DIR", state)
	os.Setenv("ACP_BRIDGE_TOKEN", serveBenchToken)
	common := []string{"--base-url", modelURL + "/v1", "--model", "mock-1", "--api-key-env", "KEY_E2E", "--log-level", "error"}
	var peers []*peer
	if transport == "stdio" {
		p, err := stdioPeer(bin, common...)
		if err != nil {
			b.Fatal(err)
		}
		peers = []*peer{p}
	} else {
		url, stop, _ := startServeB(b, bin, append(common, "--root", work, "--max-connections", "1000", "--max-sessions", "1000")...)
		defer stop()
		peers = dialPeers(b, transport, url, conns)
	}
	ds := initialized(b, peers)
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	start := time.Now()
	for i := range conns {
		p, d := peers[i%len(peers)], ds[i%len(peers)]
		wg.Go(func() {
			for k := range turns {
				lat, err := d.turn(p, 10+2*(i*turns+k), work)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				all = append(all, lat...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	for _, p := range peers {
		p.close()
	}
	if len(all) != conns*turns*stampedChunks {
		b.Fatalf("%s: %d stamped chunks read, want %d", transport, len(all), conns*turns*stampedChunks)
	}
	return all, wall
}

// BenchmarkServeIdle: the memory (RSS) one idle connection costs a
// served bridge: idle WebSocket connections and idle Streamable HTTP ones
// (initialized, the connection stream open), against a stdio bridge's
// whole process (stdio's cost of a connection). Linux (/proc) only.
func BenchmarkServeIdle(b *testing.B) {
	const idle = 500
	bin := bridgeBinaryB(b)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("reads RSS from /proc")
	}
	os.Setenv("ACP_BRIDGE_TOKEN", serveBenchToken)
	os.Setenv("ACP_BRIDGE_STATE_DIR", b.TempDir())
	args := []string{"--model", "script:" + writeScriptB(b), "--log-level", "error"}
	for _, transport := range []string{"stdio", "websocket", "http"} {
		b.Run(transport, func(b *testing.B) {
			for range b.N {
				if transport == "stdio" {
					p, err := stdioPeer(bin, args...)
					if err != nil {
						b.Fatal(err)
					}
					initialized(b, []*peer{p})
					b.ReportMetric(float64(rssKiB(p.pid)), "KiB/conn")
					p.close()
					continue
				}
				url, stop, pid := startServeB(b, bin, append(args, "--max-connections", "1000")...)
				before := rssKiB(pid)
				peers := dialPeers(b, transport, url, idle)
				initialized(b, peers)
				after := rssKiB(pid)
				b.ReportMetric(float64(after-before)/idle, "KiB/conn")
				b.ReportMetric(float64(before), "KiB-base")
				for _, p := range peers {
					p.close()
				}
				stop()
			}
		})
	}
}

const serveBenchToken = "bench-0123456789abcdef"

// dialPeers opens n connections to a served bridge over transport
// ("websocket" or "http").
func dialPeers(b *testing.B, transport, url string, n int) []*peer {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * n}}
	peers := make([]*peer, 0, n)
	for range n {
		var p *peer
		var err error
		if transport == "websocket" {
			p, err = wsPeer(url, serveBenchToken)
		} else {
			p, err = httpPeer(url, serveBenchToken, client)
		}
		if err != nil {
			b.Fatal(err)
		}
		peers = append(peers, p)
	}
	return peers
}

// initialized sends each peer its initialize and returns their dispatchers.
func initialized(b *testing.B, peers []*peer) []*dispatcher {
	ds := make([]*dispatcher, len(peers))
	for i, p := range peers {
		ds[i] = dispatch(p)
		if _, err := ds[i].call(p, 0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
			b.Fatal(err)
		}
	}
	return ds
}

func bridgeBinaryB(b *testing.B) string {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	return bins["acp-bridge"]
}

// writeScriptB is a scripted model that answers once (idle connections
// never ask it).
func writeScriptB(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "script.json")
	os.WriteFile(p, []byte(`{"responses":[{"parts":[{"text":"hi"}]}]}`), 0o600)
	return p
}

// startServeB starts `serve` on a free loopback port (the environment is
// the benchmark's) and returns its URL, a stop (SIGTERM, wait) and its pid.
func startServeB(b *testing.B, bin string, args ...string) (url string, stop func(), pid int) {
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			url = u
			break
		}
	}
	if url == "" {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatal("serve printed no URL")
	}
	go io.Copy(io.Discard, stderr)
	return url, func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }, cmd.Process.Pid
}

// rssKiB is a process's resident set (Linux), 0 if unknown.
func rssKiB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
