package suite

import (
	"strings"
	"testing"
)

func TestArchiveRoundTrip(t *testing.T) {
	cases := []string{
		"comment\n-- a --\nx\n-- b/c.json --\n{}\n",
		"-- only --\n",
		"no files at all\n",
		"-- a --\n-- not a marker\n--  --\n",
	}
	for _, in := range cases {
		a := ParseArchive([]byte(in))
		if got := string(a.Format()); got != in {
			t.Errorf("round trip of %q gave %q", in, got)
		}
	}
	a := ParseArchive([]byte("c\n-- a --\n1"))
	a.Set("a", []byte("2\n"))
	a.Set("z", []byte("3"))
	if got, want := string(a.Format()), "c\n-- a --\n2\n-- z --\n3\n"; got != want {
		t.Errorf("Set: %q, want %q", got, want)
	}
}

func TestNormalize(t *testing.T) {
	es := trace(
		`< {"jsonrpc":"2.0","id":1,"result":{"agentInfo":{"name":"x","version":"9.9"},"protocolVersion":1}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"sessionId":"abc"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"sessionId":"def"}}`,
		`< {"method":"session/update","jsonrpc":"2.0","params":{"sessionId":"def","update":{"sessionUpdate":"session_info_update","updatedAt":"2026-12-02T14:00:00Z","title":"in /ws/dir"}}}`,
		`< log line`,
		`> {"jsonrpc":"2.0","id":9,"method":"ignored/client"}`,
	)
	got := normalize(es, "/ws")
	want := `{"id":1,"jsonrpc":"2.0","result":{"agentInfo":{"name":"x","version":"$VERSION"},"protocolVersion":1}}
{"id":2,"jsonrpc":"2.0","result":{"sessionId":"$SESSION"}}
{"id":3,"jsonrpc":"2.0","result":{"sessionId":"$SESSION2"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"$SESSION2","update":{"sessionUpdate":"session_info_update","title":"in $CWD/dir","updatedAt":"$TIME"}}}
!not-json log line
`
	if got != want {
		t.Errorf("normalize:\n%s\nwant:\n%s", got, want)
	}
}

const fakeScenario = `A tool turn against the fake agent, with a scripted fs answer.
-- answers --
{"method":"fs/read_text_file","result":{"content":"scripted"}}
-- client --
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":false,"_meta":{"terminal_output":true}}}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"$CWD","mcpServers":[]}}
{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"$CWD","mcpServers":[]}}
!hold
!async
{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"$SESSION2","prompt":[{"type":"text","text":"Count"}]}}
!wait update
{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"$SESSION2"}}
!wait response 4
{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"$SESSION","prompt":[{"type":"text","text":"Go"}]}}
-- agent --
`

// TestScenarioGolden: -update writes the golden, a replay matches it, a
// changed golden is reported, and a defect fails the scenario.
func TestScenarioGolden(t *testing.T) {
	schema := testSchema(t)
	fake := func(f *fakeAgent) func([]string) Launcher {
		return func([]string) Launcher { return f.launcher() }
	}
	a := ParseArchive([]byte(fakeScenario))
	res, err := runScenario(t.Context(), "fake", a, nil, fake(&fakeAgent{}), schema, true)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Updated || !res.OK() {
		t.Fatalf("update: %+v", res)
	}
	golden, _ := a.File("agent")
	for _, want := range []string{
		`"result":{"sessionId":"$SESSION2"}`,
		`"stopReason":"cancelled"`,
		`"method":"fs/read_text_file","params":{"path":"$CWD/README.md","sessionId":"$SESSION"}`,
		`"terminal_info":{"cwd":"$CWD","terminal_id":"t1"}`,
	} {
		if !strings.Contains(string(golden), want) {
			t.Errorf("golden lacks %s:\n%s", want, golden)
		}
	}

	res, err = runScenario(t.Context(), "fake", a, nil, fake(&fakeAgent{}), schema, false)
	if err != nil || !res.OK() {
		t.Fatalf("replay: %v %+v", err, res)
	}

	a.Set("agent", []byte(strings.Replace(string(golden), `"Done."`, `"Finished."`, 1)))
	res, err = runScenario(t.Context(), "fake", a, nil, fake(&fakeAgent{}), schema, false)
	if err != nil || res.OK() || !strings.Contains(res.Diff, `- {"jsonrpc":"2.0","method":"session/update"`) {
		t.Errorf("changed golden: %v %+v", err, res)
	}

	a.Set("agent", golden)
	res, err = runScenario(t.Context(), "fake", a, nil, fake(&fakeAgent{backward: true}), schema, false)
	if err != nil || len(res.Offences) == 0 || !strings.Contains(res.Offences[0].Why, CheckStatusForward) {
		t.Errorf("defect: %v %+v", err, res)
	}
}
