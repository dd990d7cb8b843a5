// Package settings is the policy part of the settings files: the
// permission rules, hooks and per-tool timeouts a user writes in their
// config file and a project keeps in .acp-bridge/settings.yaml, and the
// project memory the bridge keeps for the user (rules from "always"
// answers, the project settings the user trusted). It reads and writes those
// files and compiles them into a Policy; package rules decides calls,
// package hooks runs commands.
package settings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/acp-bridge/acp-bridge/hooks"
	"github.com/acp-bridge/acp-bridge/rules"
	"github.com/acp-bridge/acp-bridge/sandbox"
)

// ProjectFile is where a project keeps its settings, relative to its root.
var ProjectFile = filepath.Join(".acp-bridge", "settings.yaml")

// Section is the policy part of a settings file. The user's config file
// holds it among its other keys; a project's file holds only it.
type Section struct {
	Permissions Permissions `yaml:"permissions"`
	// Hooks by event name (PreToolUse, PostToolUse, UserPromptSubmit, Stop).
	Hooks map[string][]HookSpec `yaml:"hooks"`
	// Timeouts by tool name, or MCP server (mcp__server), as durations.
	Timeouts map[string]string `yaml:"timeouts"`
	// Sandbox is a project's sandbox settings, which only tighten the
	// user's: a stricter mode, the network off (the user's own are in
	// their config file, cmd/acp-bridge).
	Sandbox SandboxSpec `yaml:"sandbox"`
}

// SandboxSpec is a project's sandbox settings as written.
type SandboxSpec struct {
	Mode    string `yaml:"mode"`    // workspace-write or read-only ("off" tightens nothing)
	Network *bool  `yaml:"network"` // false turns the network off; true adds nothing
}

// Permissions are rule strings by effect.
type Permissions struct {
	Allow []string `yaml:"allow"`
	Ask   []string `yaml:"ask"`
	Deny  []string `yaml:"deny"`
}

// HookSpec is one hook as written.
type HookSpec struct {
	Matcher string `yaml:"matcher"`
	Command string `yaml:"command"`
	Timeout string `yaml:"timeout"` // a duration; empty: hooks.DefaultTimeout
}

// Empty reports whether the section says nothing.
func (s Section) Empty() bool {
	p := s.Permissions
	return len(p.Allow)+len(p.Ask)+len(p.Deny)+len(s.Hooks)+len(s.Timeouts) == 0 && s.Sandbox == (SandboxSpec{})
}

// Policy is a compiled section, or several merged.
type Policy struct {
	Rules    rules.Set
	Hooks    hooks.Set
	Timeouts map[string]Limit
	// SandboxMode is the least a command is confined ("" for no floor),
	// and NoNetwork turns the sandbox's network off whatever the user
	// allowed: what a project asks for (it only tightens).
	SandboxMode sandbox.Mode
	NoNetwork   bool
}

// Limit is a configured timeout and where it was set, so a call it stops
// can name the setting: "timeouts.bash in /home/u/.config/acp-bridge/config.yaml".
type Limit struct {
	D     time.Duration
	Where string
}

// Compile checks a section and compiles it; every problem is reported, each
// naming the key it is about. root anchors the rules' relative paths.
func (s Section) Compile(src rules.Source, root string) (Policy, []error) {
	var p Policy
	var errs []error
	for _, g := range []struct {
		e  rules.Effect
		rs []string
	}{{rules.Deny, s.Permissions.Deny}, {rules.Ask, s.Permissions.Ask}, {rules.Allow, s.Permissions.Allow}} {
		for i, text := range g.rs {
			r, err := rules.Parse(g.e, text, src)
			if err != nil {
				errs = append(errs, fmt.Errorf("permissions.%s[%d]: %v", g.e, i, err))
				continue
			}
			r.Root = root
			p.Rules = append(p.Rules, r)
		}
	}
	for _, ev := range hooks.Events {
		for i, spec := range s.Hooks[string(ev)] {
			var d time.Duration
			if spec.Timeout != "" {
				var err error
				if d, err = time.ParseDuration(spec.Timeout); err != nil || d <= 0 {
					errs = append(errs, fmt.Errorf("hooks.%s[%d].timeout: %q is not a positive duration (e.g. 10s)", ev, i, spec.Timeout))
					continue
				}
			}
			h, err := hooks.New(ev, spec.Matcher, spec.Command, d, src.String())
			if err != nil {
				errs = append(errs, fmt.Errorf("hooks.%s[%d]: %v", ev, i, err))
				continue
			}
			p.Hooks = append(p.Hooks, h)
		}
	}
	for name := range s.Hooks {
		if !slices.Contains(hooks.Events, hooks.Event(name)) {
			errs = append(errs, fmt.Errorf("hooks.%s: unknown event (PreToolUse, PostToolUse, UserPromptSubmit or Stop)", name))
		}
	}
	for _, name := range sortedKeys(s.Timeouts) {
		d, err := time.ParseDuration(s.Timeouts[name])
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("timeouts.%s: %q is not a positive duration (e.g. 30s, 5m)", name, s.Timeouts[name]))
			continue
		}
		if p.Timeouts == nil {
			p.Timeouts = map[string]Limit{}
		}
		where := "timeouts." + name
		if src.Path != "" {
			where += " in " + src.Path
		}
		p.Timeouts[strings.ToLower(name)] = Limit{D: d, Where: where}
	}
	if s.Sandbox.Mode != "" {
		if m, err := sandbox.ParseMode(s.Sandbox.Mode); err != nil {
			errs = append(errs, fmt.Errorf("sandbox.mode: %v", err))
		} else {
			p.SandboxMode = m
		}
	}
	p.NoNetwork = s.Sandbox.Network != nil && !*s.Sandbox.Network
	return p, errs
}

// Merge adds q after p: rules and hooks of both (the user's hooks run
// first), q's timeouts over p's.
func (p Policy) Merge(q Policy) Policy {
	out := Policy{Rules: append(slices.Clip(p.Rules), q.Rules...), Hooks: append(slices.Clip(p.Hooks), q.Hooks...),
		SandboxMode: p.SandboxMode, NoNetwork: p.NoNetwork || q.NoNetwork}
	if q.SandboxMode.Rank() > out.SandboxMode.Rank() {
		out.SandboxMode = q.SandboxMode // the tighter one
	}
	if len(p.Timeouts)+len(q.Timeouts) > 0 {
		out.Timeouts = map[string]Limit{}
		for _, m := range []map[string]Limit{p.Timeouts, q.Timeouts} {
			for k, v := range m {
				out.Timeouts[k] = v
			}
		}
	}
	return out
}

// Timeout is the configured timeout of a tool: its own, else its MCP
// server's (mcp__server for mcp__server__tool); zero when none is set.
func (p Policy) Timeout(tool string) Limit {
	tool = strings.ToLower(tool)
	if d, ok := p.Timeouts[tool]; ok {
		return d
	}
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, _, ok := strings.Cut(rest, "__"); ok {
			return p.Timeouts["mcp__"+server]
		}
	}
	return Limit{}
}

// Project is a project's settings file, read.
type Project struct {
	Path    string // the file; "" when the project has none
	Section Section
	// Untrusted is what needs the user's acceptance: the allow rules and
	// the hooks, as written.
	Untrusted Section
	// Fingerprint identifies Untrusted: a trust given to one fingerprint
	// does not carry over to a changed file.
	Fingerprint string
}

// LoadProject reads root's settings file. A project without one has a zero
// Project and no error; a file that does not parse is an error naming it.
func LoadProject(root string) (Project, error) {
	path := filepath.Join(root, ProjectFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return Project{}, nil
	}
	if err != nil {
		return Project{}, err
	}
	s, err := Parse(b)
	if err != nil {
		return Project{}, fmt.Errorf("%s: %v", path, err)
	}
	p := Project{Path: path, Section: s}
	p.Untrusted = Section{Permissions: Permissions{Allow: s.Permissions.Allow}, Hooks: s.Hooks}
	if len(s.Permissions.Allow)+len(s.Hooks) > 0 {
		// encoding/json sorts map keys: the fingerprint does not depend on
		// the file's layout, only on what it allows and runs.
		j, _ := json.Marshal(p.Untrusted)
		sum := sha256.Sum256(j)
		p.Fingerprint = hex.EncodeToString(sum[:])
	}
	return p, nil
}

// Parse reads a project settings file: only the policy keys, each known.
func Parse(b []byte) (Section, error) {
	var s Section
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) { // EOF: empty
		return Section{}, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
