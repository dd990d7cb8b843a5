package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance"
	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/conformance/suite"
	"github.com/acp-bridge/acp-bridge/internal/staletmp"
)

var update = flag.Bool("update", false, "rewrite the scenario goldens in conformance/testdata/scenarios")

var binDir = sync.OnceValues(func() (string, error) { return staletmp.MkdirTemp("acp-conform-test-") })

// TestMain removes the binaries built for the tests, so a run leaves
// nothing in $TMPDIR; and those of earlier runs that were killed before
// they could.
func TestMain(m *testing.M) {
	staletmp.Sweep(os.TempDir(), time.Now(), "acp-conform-test-*")
	code := m.Run()
	if dir, err := binDir(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// build compiles a main package (a path of this module or of a dependency
// in the module cache) once per test binary.
func build(pkg, name string) (string, error) {
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

var buildBridge = sync.OnceValues(func() (string, error) { return build("./cmd/acp-bridge", "acp-bridge") })

// runConform runs the command as a user would and decodes its JSON report.
func runConform(t *testing.T, args ...string) (int, *suite.Report, string) {
	t.Helper()
	js := filepath.Join(t.TempDir(), "report.json")
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	code := run(ctx, append([]string{"-json", js}, args...), &out, &errb)
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatalf("exit %d, no JSON report: %v\n%s%s", code, err, out.String(), errb.String())
	}
	var rep suite.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return code, &rep, out.String()
}

func status(rep *suite.Report, id string) suite.Status {
	r, _ := rep.Result(id)
	return r.Status
}

// TestBridge runs the whole suite against acp-bridge with a scripted model
// that calls tools (read, and bash and write when the bridge has them).
func TestBridge(t *testing.T) {
	// The bridge keeps its session logs in a directory of the test's own.
	t.Setenv("ACP_BRIDGE_STATE_DIR", t.TempDir())
	bin, err := buildBridge()
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/bridge-model.json")
	code, rep, text := runConform(t, "--", bin, "--model", "script:"+script)
	t.Log("\n" + text)
	if code != 0 || !rep.Conformant {
		t.Errorf("exit %d, conformant %v; want 0, true", code, rep.Conformant)
	}
	for _, res := range rep.Results {
		if res.Level == suite.Mandatory && res.Status == suite.Fail {
			t.Errorf("%s failed: %+v", res.ID, res.Offences)
		}
	}
	// The checks the bridge's current features exercise must really run.
	for _, id := range []string{suite.CheckInitVersion, suite.CheckInitUnsupported, suite.CheckUnknownMethod,
		suite.CheckUnknownNotif, suite.CheckBadParams, suite.CheckRelativeCwd, suite.CheckPromptTurn,
		suite.CheckUpdatesBefore, suite.CheckCancel, suite.CheckCancelQuiet, suite.CheckCapabilities,
		suite.CheckKnownID, suite.CheckStatusForward, suite.CheckPathsAbsolute, suite.CheckToolName,
		suite.CheckLoadReplay, suite.CheckDeleteUnknown, suite.CheckNoticeGated, suite.CheckTermGated, suite.CheckFork} {
		if s := status(rep, id); s != suite.Pass {
			t.Errorf("%s: %s, want pass", id, s)
		}
	}
}

// TestBridgeOptIns runs the suite against acp-bridge as a client that opts
// in to notices, compaction updates and terminal output deltas: the gates
// then check the bridge sends only what such a client asked for.
func TestBridgeOptIns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite again")
	}
	t.Setenv("ACP_BRIDGE_STATE_DIR", t.TempDir())
	bin, err := buildBridge()
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/bridge-model.json")
	code, rep, text := runConform(t, "-notices", "-compaction", "-terminal-output-delta", "--", bin, "--model", "script:"+script)
	if code != 0 || !rep.Conformant {
		t.Errorf("exit %d, conformant %v; want 0, true\n%s", code, rep.Conformant, text)
	}
	for _, id := range []string{suite.CheckNoticeGated, suite.CheckTermGated, suite.CheckSchemaAgent, suite.CheckToolName, suite.CheckLoadReplay, suite.CheckFork} {
		if s := status(rep, id); s != suite.Pass {
			t.Errorf("%s: %s, want pass", id, s)
		}
	}
}

// TestExampleAgent runs the suite against acp-go-sdk's example agent, an
// agent this project did not write. It is skipped when that cannot be built.
func TestExampleAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("the example agent's turns take seconds")
	}
	bin, err := build("github.com/coder/acp-go-sdk/example/agent", "example-agent")
	if err != nil {
		t.Skipf("cannot build the acp-go-sdk example agent: %v", err)
	}
	code, rep, text := runConform(t, "--", bin)
	t.Log("\n" + text)
	// The official kit finds it CONFORMANT, and so must we: where the two
	// overlap they agree (a relative cwd accepted is advisory).
	if code != 0 || !rep.Conformant {
		t.Errorf("exit %d, conformant %v; want 0, true", code, rep.Conformant)
	}
	// What v0.13.0's example agent does: it speaks the protocol cleanly,
	// streams a turn with a permission request, honours cancel, accepts
	// any cwd, and predates tool names, fork and delete.
	want := map[string]suite.Status{
		suite.CheckStdout: suite.Pass, suite.CheckSchemaAgent: suite.Pass, suite.CheckInitVersion: suite.Pass,
		suite.CheckPromptTurn: suite.Pass, suite.CheckPermTitle: suite.Pass, suite.CheckCancel: suite.Pass,
		suite.CheckRelativeCwd: suite.Fail, suite.CheckLoadReplay: suite.Skip,
		suite.CheckFork: suite.Skip, suite.CheckDeleteUnknown: suite.Skip, suite.CheckNoticeGated: suite.Pass,
	}
	for id, s := range want {
		if got := status(rep, id); got != s {
			t.Errorf("%s: %s, want %s", id, got, s)
		}
	}
}

// TestScenarios replays the txtar transcripts against the bridge; -update
// rewrites their agent sections.
func TestScenarios(t *testing.T) {
	schema, err := acpschema.Default()
	if err != nil {
		t.Fatal(err)
	}
	replayScenarios(t, "", suite.RunScenario, schema)
}

// replayScenarios replays every transcript of testdata/scenarios against
// the bridge with run (one protocol version's runner), which compares the
// agent's output with the golden section named golden in the messages
// (-update rewrites it) and checks the messages against schema.
func replayScenarios(t *testing.T, golden string, run func(context.Context, string, *suite.Archive, []string, *acpschema.Schema, bool) (*suite.ScenarioResult, error), schema *acpschema.Schema) {
	t.Helper()
	// The bridge keeps its session logs in a directory of the test's own.
	t.Setenv("ACP_BRIDGE_STATE_DIR", t.TempDir())
	bin, err := buildBridge()
	if err != nil {
		t.Fatal(err)
	}
	conformance.SkipUnlessConfined(t, bin)
	files, _ := filepath.Glob("../../testdata/scenarios/*.txtar")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := suite.ParseArchive(data)
			res, err := run(t.Context(), filepath.Base(path), a, []string{bin, "--model", "script:{scenario}/model.json"}, schema, *update)
			if err != nil {
				t.Fatal(err)
			}
			if res == nil {
				t.Skip("a version-negotiation scenario: no run in this version")
			}
			if res.Updated {
				if err := os.WriteFile(path, a.Format(), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("updated %s", path)
			}
			if res.Diff != "" {
				t.Errorf("agent output differs from the golden%s (run with -update to accept):\n%s", golden, res.Diff)
			}
			for _, o := range res.Offences {
				t.Errorf("#%d %s\n  %s", o.Seq, o.Why, o.Message)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{nil, 2, "no agent command"},
		{[]string{"-h"}, 0, "Usage:"},
		{[]string{"-no-such-flag", "--", "x"}, 2, "flag provided but not defined"},
		{[]string{"--", "/nonexistent/agent"}, 1, "cannot start the agent"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := run(t.Context(), tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.out) {
			t.Errorf("%q: exit %d, want %d containing %q\n%s%s", tc.args, code, tc.code, tc.out, out.String(), errb.String())
		}
	}
}

// TestScenariosV2 replays the same scenarios in ACP v2 (suite.V2Script)
// against their "agent.v2" goldens, every message the agent writes checked
// against the v2 draft's schema when the workspace has it.
func TestScenariosV2(t *testing.T) {
	schema, err := acpschema.V2()
	if err != nil {
		t.Fatal(err)
	}
	if schema == nil {
		t.Log("no ACP v2 schema beside the checkout: the messages are not checked against it")
	}
	replayScenarios(t, " "+suite.V2Golden, suite.RunScenarioV2, schema)
}
