package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/acp-bridge/acp-bridge/tools/bash"
)

// check is one line of doctor's report.
type check struct {
	name string
	ok   bool
	skip bool   // not checked: an earlier check failed
	msg  string // what was found
	fix  string // what to do about it, when not ok
}

// runDoctor checks, in a few seconds, what makes an install work, with the
// same flags and environment the editor would start the bridge with. One
// line per check; non-zero exit when something is wrong.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	checks := doctor(ctx, args)
	failed := 0
	for _, c := range checks {
		mark := "ok  "
		switch {
		case c.skip:
			mark = "skip"
		case !c.ok:
			mark = "FAIL"
			failed++
		}
		line := fmt.Sprintf("%s %-8s %s", mark, c.name, c.msg)
		if !c.ok && !c.skip && c.fix != "" {
			line += ". Fix: " + c.fix
		}
		fmt.Fprintln(stdout, line)
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d problem(s) found.\n", failed)
		return 1
	}
	fmt.Fprintln(stdout, "Everything acp-bridge needs is in place.")
	return 0
}

func doctor(ctx context.Context, args []string) []check {
	var out []check
	var flagErr bytes.Buffer
	// `doctor serve ...` checks serve's settings too (serve_doctor.go).
	sc, args := serveDoctorArgs(args)
	cfg, _, err := parseFlags("acp-bridge doctor", args, &flagErr, sc.flagSets()...)
	switch {
	case errors.Is(err, flag.ErrHelp) || errors.Is(err, errVersion):
		cfg, err = nil, errors.New("doctor takes the bridge's own flags (see acp-bridge --help)")
	}
	if err != nil {
		msg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(flagErr.String()), "acp-bridge: "))
		if msg == "" || strings.Contains(msg, "Usage") {
			msg = err.Error()
		}
		out = append(out, check{name: "config", msg: strings.Join(strings.Fields(msg), " "),
			fix: "correct the setting it names (the config file, an ACP_BRIDGE_* variable or a flag), then run acp-bridge doctor again"})
		// The rest with built-in defaults: still worth knowing.
		cfg = &config{stateDir: defaultStateDir()}
		if v, ok := os.LookupEnv("ACP_BRIDGE_STATE_DIR"); ok {
			cfg.stateDir = v
		}
	} else {
		where := "no config file (built-in defaults)"
		if cfg.configPath != "" {
			where = cfg.configPath + " parses"
		}
		out = append(out, check{name: "config", ok: true, msg: where})
		out = append(out, endpointChecks(ctx, cfg)...)
		wd, _ := os.Getwd()
		out = append(out, policyChecks(cfg, wd)...)
		out = append(out, profileCheck(wd))
		out = append(out, searchChecks(ctx, cfg)...)
	}
	out = append(out, sc.checks()...)
	out = append(out, stateCheck(cfg.stateDir), bashCheck(ctx), sandboxCheck(ctx, cfg),
		check{name: "version", ok: true, msg: fmt.Sprintf("%s, %s %s/%s", versionLine(), runtime.Version(), runtime.GOOS, runtime.GOARCH)})
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// endpointChecks: which key the default model uses and where it came from,
// then whether its endpoint answers with that key and lists the model.
func endpointChecks(ctx context.Context, cfg *config) []check {
	if strings.HasPrefix(cfg.model, "script:") {
		if _, err := model.LoadScript(strings.TrimPrefix(cfg.model, "script:")); err != nil {
			return []check{{name: "model", msg: err.Error(), fix: "point --model script:FILE at a readable script"}}
		}
		return []check{{name: "model", ok: true, msg: "a scripted model (" + cfg.model + "): no endpoint, no key"}}
	}
	provs, def, err := cfg.catalog()
	if err != nil {
		return []check{{name: "model", msg: err.Error(), fix: "set the model and endpoint together (see acp-bridge --help, Models)"}}
	}
	provName, modelName, _ := strings.Cut(def, "/")
	p := findProvider(provs, provName)
	keyEnv := p.keyEnv()
	needKey := isHosted(p.BaseURL) || p.APIKeyEnv != ""
	key, source := keySource(keyEnv, p.BaseURL)
	var out []check
	switch {
	case key != "":
		out = append(out, check{name: "key", ok: true, msg: "for " + p.BaseURL + " from " + source})
	case needKey:
		return append(out, check{name: "key", msg: "no API key for " + p.BaseURL + " (" + keyEnv + " is not set and none is stored)",
			fix: "run acp-bridge login, or set " + keyEnv + " in the environment the editor starts acp-bridge with (Zed: agent_servers env)"},
			check{name: "endpoint", skip: true, msg: "not checked without a key"})
	default:
		out = append(out, check{name: "key", ok: true, msg: "none set for " + p.BaseURL + " (a local endpoint may need none; else set " + keyEnv + ")"})
	}
	ids, err := listModels(ctx, p.BaseURL, key)
	switch {
	case err != nil && strings.Contains(err.Error(), "rejected the key"):
		out = append(out, check{name: "endpoint", msg: err.Error(), fix: "run acp-bridge login with a valid key, or correct " + keyEnv})
	case err != nil:
		out = append(out, check{name: "endpoint", msg: err.Error(),
			fix: "check the network and the base URL (--base-url, OPENAI_BASE_URL or base_url in the config file)"})
	case !slices.Contains(ids, modelName):
		out = append(out, check{name: "endpoint", msg: fmt.Sprintf("%s answers but does not list the model %q (%s)", p.BaseURL, modelName, modelSummary(ids)),
			fix: "choose a model it lists (--model, ACP_BRIDGE_MODEL or model in the config file)"})
	default:
		out = append(out, check{name: "endpoint", ok: true, msg: fmt.Sprintf("%s answers and lists %s", p.BaseURL, modelName)})
	}
	return out
}

// stateCheck: session logs can be written where they are kept.
func stateCheck(dir string) check {
	if dir == "" {
		return check{name: "state", ok: true, msg: "sessions are kept in memory only (no state directory set)"}
	}
	fix := "make " + dir + " writable, or choose another with --state-dir or ACP_BRIDGE_STATE_DIR"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return check{name: "state", msg: "cannot create " + dir + ": " + unwrapPathError(err), fix: fix}
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return check{name: "state", msg: "cannot write in " + dir + ": " + unwrapPathError(err), fix: fix}
	}
	f.Close()
	os.Remove(f.Name())
	return check{name: "state", ok: true, msg: dir + " is writable"}
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// bashCheck: the bash tool's shell is there, and which one it is.
func bashCheck(ctx context.Context) check {
	p, err := bash.Find()
	if err != nil {
		return check{name: "bash", msg: err.Error(), fix: "the bash tool fails until bash is installed; file tools still work"}
	}
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return check{name: "bash", msg: p + " does not run: " + err.Error(), fix: "reinstall bash, or put a working one first on PATH"}
	}
	return check{name: "bash", ok: true, msg: filepath.Clean(p) + " (" + firstLine(strings.TrimSpace(string(out))) + ")"}
}
