package conformance_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

// The client scripts of testdata/tsclient drive the real binary with the
// official ACP TypeScript SDK. This is their Go side, shared: tsClient
// installs the SDK once per test and runs a script (tsRun); every script
// writes the report of testdata/tsclient/bridge.mjs (tsReport), whose
// lines are checked here against the schemas. A new script: import
// bridge.mjs there, and here embed tsReport in the type of its report and
// run it with tsClient.run.

// tsLine is one line a script saw on the wire, as it went: proc numbers
// the bridge processes of a run from 0; dir "in" is agent→client, "out"
// client→agent.
type tsLine struct {
	Proc int    `json:"proc"`
	Dir  string `json:"dir"`
	Line string `json:"line"`
}

type tsError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// tsReport is what every script reports: the lines, and each request's
// result or error by the name the script gave it. "scenario" and
// "connectionN" errors are the script's own failures.
type tsReport struct {
	Lines     []tsLine                  `json:"lines"`
	Responses map[string]map[string]any `json:"responses"`
	Errors    map[string]tsError        `json:"errors"`
}

func (r *tsReport) base() *tsReport { return r }

// tsClient is the npm project of the scripts with the official TypeScript
// SDK installed, and the bridge binary they drive.
type tsClient struct {
	t   *testing.T
	dir string
	bin string
	// schema is the 1.25 schema the SDK ships, with its unstable set.
	schema *acpschema.Schema
}

// newTSClient installs testdata/tsclient (the scripts and the npm
// project) with installNodePackage and builds the bridge.
func newTSClient(t *testing.T) *tsClient {
	t.Helper()
	c := &tsClient{t: t, dir: installNodePackage(t, "tsclient")}
	// The SDK ships the schema release it speaks (1.25.0 stable and unstable).
	c.schema = c.sdkSchema("v1/schema.json")
	var err error
	if c.bin, err = buildBridge(); err != nil {
		t.Fatal(err)
	}
	return c
}

// installNodePackage copies the files of testdata/<pkg> (its scripts and
// npm project) into a temporary directory and installs the packages there
// (npm ci: the lock file's versions). It skips the test in -short mode,
// without node and npm, or when npm cannot install.
func installNodePackage(t *testing.T, pkg string) (dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("installs an npm package and runs node")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	dir = t.TempDir()
	files, err := os.ReadDir(filepath.Join("testdata", pkg))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", pkg, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npm := exec.CommandContext(t.Context(), "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	npm.Dir = dir
	if out, err := npm.CombinedOutput(); err != nil {
		t.Skipf("cannot install testdata/%s's packages: %v\n%s", pkg, err, out)
	}
	return dir
}

// sdkSchema loads a schema file the SDK ships (a path under its schema
// directory, with its unstable companion beside it).
func (c *tsClient) sdkSchema(rel string) *acpschema.Schema {
	c.t.Helper()
	s, err := acpschema.Load(filepath.Join(c.dir, "node_modules", "@agentclientprotocol", "sdk", "schema", filepath.FromSlash(rel)))
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// tsRun is one run of a script.
type tsRun struct {
	Script   string         // the file in testdata/tsclient
	Name     string         // the run's name in messages
	Scenario map[string]any // $SCENARIO
	Args     []string       // the bridge's arguments
	// Env is added to the script's (and the bridge's) environment, after a
	// home (HOME, XDG_CONFIG_HOME) and ACP_BRIDGE_STATE_DIR of the run's
	// own, so it can name others.
	Env []string
	// Schemas: every line is checked against each, one checker per schema
	// and bridge process, and none may leave a message unchecked; nil is
	// the SDK's 1.25 schema.
	Schemas []*acpschema.Schema
	// Strict: a failed request fails the test (else the test looks at
	// Errors itself).
	Strict bool
}

// run runs r and decodes the script's report into out (a type that embeds
// tsReport). The script's own failures (errors "scenario", "connectionN")
// end the test; every line is checked against r.Schemas.
func (c *tsClient) run(r tsRun, out interface{ base() *tsReport }) {
	t := c.t
	t.Helper()
	sc, err := json.Marshal(r.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.json")
	cmd := exec.CommandContext(t.Context(), "node", append([]string{r.Script, c.bin}, r.Args...)...)
	cmd.Dir = c.dir
	home := t.TempDir()
	cmd.Env = append(append(os.Environ(), "SCENARIO="+string(sc), "OUT="+path,
		"ACP_BRIDGE_STATE_DIR="+t.TempDir(), "HOME="+home, "XDG_CONFIG_HOME="+home), r.Env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: node %s: %v\n%s", r.Name, r.Script, err, b)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: the report of %s: %v", r.Name, r.Script, err)
	}
	rep := out.base()
	for k, e := range rep.Errors {
		if k == "scenario" || strings.HasPrefix(k, "connection") {
			t.Fatalf("%s: %s: %s", r.Name, k, e.Message)
		}
		if r.Strict {
			t.Errorf("%s: %s failed: %d %s", r.Name, k, e.Code, e.Message)
		}
	}
	schemas := r.Schemas
	if schemas == nil {
		schemas = []*acpschema.Schema{c.schema}
	}
	type key struct{ proc, schema int }
	checks := map[key]*acpschema.Checker{}
	for _, l := range rep.Lines {
		dir := acpschema.FromAgent
		if l.Dir == "out" {
			dir = acpschema.ToAgent
		}
		for i, s := range schemas {
			k := key{l.Proc, i}
			if checks[k] == nil {
				checks[k] = acpschema.NewChecker(s)
			}
			if err := checks[k].Check(dir, []byte(l.Line)); err != nil {
				t.Errorf("%s: not valid against %s: %v\n%s", r.Name, s.Path, err, l.Line)
			}
		}
	}
	for k, c := range checks {
		if u := c.Unchecked(); len(u) > 0 {
			t.Errorf("%s: %s left messages unchecked: %v", r.Name, schemas[k.schema].Path, u)
		}
	}
}
