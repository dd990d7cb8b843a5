package remote

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
)

// A remote client names directories on the server's disk: a session's cwd
// and additional directories must lie under one of the roots the server
// was given (--root). This is where the agent starts its tools and reads
// project files; it is not a sandbox (a command the user allows can still
// reach anything the server's user can).

// cleanRoots makes each root absolute, with symbolic links resolved, so a
// requested path resolved the same way compares with it.
func cleanRoots(roots []string) ([]string, error) {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, errors.New("remote: root " + r + ": " + err.Error())
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return nil, errors.New("remote: root " + r + " is not a directory")
		}
		out = append(out, filepath.Clean(real))
	}
	return out, nil
}

// resolve is p with every symbolic link of its longest existing prefix
// resolved: a link under a root that points outside it is outside. A link
// whose target does not exist (yet) is followed too: where it sits says
// nothing of where the directory will be once something creates its
// target. ok is false for a chain of links too long to follow (a loop).
func resolve(p string) (string, bool) {
	return resolveDepth(p, 0)
}

// maxLinks is how many links resolve follows, as the kernel's ELOOP limit.
const maxLinks = 40

func resolveDepth(p string, depth int) (string, bool) {
	p = filepath.Clean(p)
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest), true
		}
		if target, err := os.Readlink(p); err == nil {
			if depth >= maxLinks {
				return "", false
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return resolveDepth(filepath.Join(target, rest), depth+1)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), true
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// underRoots reports whether the absolute path p lies under a root.
func (s *Server) underRoots(p string) bool {
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return false
	}
	p, ok := resolve(p)
	if !ok {
		return false
	}
	for _, r := range s.roots {
		rel, err := filepath.Rel(r, p)
		if runtime.GOOS == "windows" && err == nil && !strings.EqualFold(filepath.VolumeName(r), filepath.VolumeName(p)) {
			continue
		}
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// screen refuses a request naming a directory outside the roots, before
// the agent sees it (nil lets it through).
func (s *Server) screen(m *message) *acp.Error {
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return nil
	}
	var p struct {
		Cwd  *string  `json:"cwd"`
		Dirs []string `json:"additionalDirectories"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return nil // the agent answers what it cannot decode
	}
	if p.Cwd != nil && (*p.Cwd != "" || m.Method == acp.MethodSessionNew) && !s.underRoots(*p.Cwd) {
		return acp.InvalidParams("invalid params: cwd %q is outside the directories this server serves (%s)", *p.Cwd, strings.Join(s.roots, ", "))
	}
	for _, d := range p.Dirs {
		if !s.underRoots(d) {
			return acp.InvalidParams("invalid params: additional directory %q is outside the directories this server serves (%s)", d, strings.Join(s.roots, ", "))
		}
	}
	return nil
}

// filterList leaves out of a session/list answer the sessions whose cwd is
// outside the roots (kept by this server's store for stdio clients, say).
func (s *Server) filterList(line []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(line, &env) != nil {
		return line
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(env["result"], &res) != nil {
		return line
	}
	var list []json.RawMessage
	if json.Unmarshal(res["sessions"], &list) != nil {
		return line
	}
	kept := list[:0]
	for _, e := range list {
		var info struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(e, &info) == nil && s.underRoots(info.Cwd) {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(list) {
		return line
	}
	var err error
	if res["sessions"], err = json.Marshal(kept); err != nil {
		return line
	}
	if env["result"], err = json.Marshal(res); err != nil {
		return line
	}
	out, err := json.Marshal(env)
	if err != nil {
		return line
	}
	return append(out, '\n')
}
