//go:build ignore

// grepcall makes one grep call through an acp-bridge binary as an editor
// would, from the bridge's start to the call's completed card, and exits
// there: a whole process to time against rg with any timer that takes two
// commands (hyperfine, /usr/bin/time). It prints the first line of the
// call's result on stderr. With GREPCALL_WAIT=1 it then closes the
// bridge's stdin and waits for it to exit, so that a timer that reads the
// CPU time of the processes waited for (/usr/bin/time) counts the
// bridge's: its start-up, the call and its exit.
//
//	go build -o /tmp/grepcall scripts/grepcall.go
//	/tmp/grepcall BRIDGE ROOT PATTERN     (the session's cwd is ROOT)
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: grepcall BRIDGE ROOT PATTERN")
		os.Exit(2)
	}
	bin, root, pattern := os.Args[1], os.Args[2], os.Args[3]
	dir, err := os.MkdirTemp("", "grepcall-")
	check(err)
	defer os.RemoveAll(dir)
	args, _ := json.Marshal(map[string]string{"pattern": pattern})
	script := filepath.Join(dir, "script.json")
	check(os.WriteFile(script, []byte(`{"responses":[{"parts":[{"tool_call":{"name":"grep","arguments":`+string(args)+`}}]},{"parts":[{"text":"done"}]}]}`), 0o644))
	cmd := exec.Command(bin, "--model", "script:"+script, "--log-level", "error", "--state-dir", filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	stdin, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	defer cmd.Process.Kill()
	r := bufio.NewReaderSize(stdout, 1<<20)
	read := func() []byte {
		line, err := r.ReadBytes('\n')
		check(err)
		return line
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	read()
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`+"\n", root)
	var created struct {
		Result struct{ SessionID string } `json:"result"`
	}
	for created.Result.SessionID == "" {
		json.Unmarshal(read(), &created)
	}
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"search"}]}}`+"\n", created.Result.SessionID)
	for {
		var m struct {
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					Status        string `json:"status"`
					Content       []struct {
						Content struct{ Text string } `json:"content"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		check(json.Unmarshal(read(), &m))
		u := m.Params.Update
		if u.SessionUpdate != "tool_call_update" || (u.Status != "completed" && u.Status != "failed") {
			continue
		}
		if len(u.Content) > 0 {
			first, _, _ := strings.Cut(u.Content[0].Content.Text, "\n")
			fmt.Fprintln(os.Stderr, first)
		}
		if u.Status == "failed" {
			os.Exit(1)
		}
		if os.Getenv("GREPCALL_WAIT") == "1" {
			stdin.Close()
			go io.Copy(io.Discard, r)
			check(cmd.Wait())
		}
		return
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "grepcall:", err)
		os.Exit(1)
	}
}
