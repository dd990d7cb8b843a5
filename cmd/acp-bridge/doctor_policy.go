package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/hooks"
	"github.com/acp-bridge/acp-bridge/profiles"
	"github.com/acp-bridge/acp-bridge/rules"
	"github.com/acp-bridge/acp-bridge/settings"
)

// policyChecks validate the permission rules and hooks: the config file's
// (they parsed, or parseFlags failed already) and the project's in the
// working directory, whose mistakes only show in the editor otherwise; and
// that every hook's program can be found.
func policyChecks(cfg *config, dir string) []check {
	var out []check
	u := cfg.policy
	c := check{name: "rules", ok: true, msg: fmt.Sprintf("config file: %s, %s, %d tool timeout(s)", plural(len(u.Rules), "rule"), plural(len(u.Hooks), "hook"), len(u.Timeouts))}
	if bad := missingPrograms(u.Hooks, dir); len(bad) > 0 {
		c.ok, c.msg = false, "config file: "+strings.Join(bad, "; ")
		c.fix = "install the program, or correct the hook's command in " + cfg.configPath
	}
	out = append(out, c)
	if dir == "" {
		return out
	}
	proj, err := settings.LoadProject(dir)
	switch {
	case err != nil:
		return append(out, check{name: "project", msg: err.Error(), fix: "correct the file; until then the bridge applies none of it, not even its deny rules"})
	case proj.Path == "":
		return append(out, check{name: "project", ok: true, msg: "no " + settings.ProjectFile + " in " + dir})
	}
	pol, errs := proj.Section.Compile(rules.Source{Kind: "project", Path: proj.Path}, dir)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return append(out, check{name: "project", msg: proj.Path + ": " + strings.Join(msgs, "; "), fix: "correct the entries named; the bridge skips them"})
	}
	pc := check{name: "project", ok: true, msg: fmt.Sprintf("%s: %s, %s", proj.Path, plural(len(pol.Rules), "rule"), plural(len(pol.Hooks), "hook"))}
	if proj.Fingerprint != "" {
		trusted := false
		if sd := settingsDir(); sd != "" {
			m, _ := (&settings.Store{Dir: sd}).Load(dir)
			trusted = m.Trusted == proj.Fingerprint
		}
		if trusted {
			pc.msg += "; its allow rules and hooks are trusted"
		} else {
			pc.msg += "; its allow rules and hooks wait for your trust in the editor (asked at the next prompt)"
		}
	}
	if bad := missingPrograms(pol.Hooks, dir); len(bad) > 0 {
		pc.ok, pc.msg = false, proj.Path+": "+strings.Join(bad, "; ")
		pc.fix = "install the program, or correct the hook's command"
	}
	return append(out, pc)
}

// shellWords are what a hook's command may start with that is no program.
var shellWords = []string{"echo", "printf", "cd", "exit", "test", "[", "[[", "true", "false", ":", ".", "source",
	"if", "for", "while", "case", "{", "(", "exec", "command", "read", "set", "export"}

// missingPrograms names the hooks whose program is not there: a path that
// does not exist (relative to dir, where hooks run), or a name not on PATH.
func missingPrograms(hs hooks.Set, dir string) []string {
	var bad []string
	for _, h := range hs {
		f := strings.Fields(h.Command)
		if len(f) == 0 {
			continue
		}
		prog := strings.Trim(f[0], `"'`)
		if strings.Contains(prog, "=") || slices.Contains(shellWords, prog) || strings.ContainsAny(prog, "$`") {
			continue
		}
		if strings.Contains(prog, "/") {
			p := prog
			if !filepath.IsAbs(p) && dir != "" {
				p = filepath.Join(dir, p)
			}
			if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				bad = append(bad, fmt.Sprintf("the %s runs %s, which is not an executable file", h.Name(), prog))
			}
			continue
		}
		if _, err := exec.LookPath(prog); err != nil {
			bad = append(bad, fmt.Sprintf("the %s runs %s, which is not on PATH", h.Name(), prog))
		}
	}
	return bad
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// profileCheck reads the subagent profiles, the user's and the project's
// in dir, as a session would: a file the editor would only show as a
// notice is named here with what is wrong. Whether their tools and models
// exist is checked in a session (it knows the tools and the models).
func profileCheck(dir string) check {
	var dirs []profiles.Dir
	if sd := settingsDir(); sd != "" {
		dirs = append(dirs, profiles.Dir{Path: filepath.Join(sd, "agents"), Kind: "user"})
	}
	if dir != "" {
		dirs = append(dirs, profiles.Dir{Path: filepath.Join(dir, agent.ProjectProfilesDir), Kind: "project"})
	}
	set, errs := profiles.Load(nil, dirs...)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return check{name: "profiles", msg: strings.Join(msgs, "; "), fix: "correct the files named; the bridge leaves them out"}
	}
	var names []string
	for _, p := range set.List() {
		names = append(names, p.Name)
	}
	return check{name: "profiles", ok: true, msg: "subagents: " + strings.Join(names, ", ")}
}
