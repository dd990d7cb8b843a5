package sandbox

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
)

type ctxKey struct{}

// WithPolicy returns ctx carrying the policy for the commands started on
// its behalf (a turn's tool calls, hooks, jobs); nil or mode off runs them
// as they are.
func WithPolicy(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// PolicyFrom is the policy ctx carries, or nil.
func PolicyFrom(ctx context.Context) *Policy {
	p, _ := ctx.Value(ctxKey{}).(*Policy)
	return p
}

// refusalWords are how programs report what a sandbox refuses: Landlock
// fails a write or a TCP connect with EACCES, seccomp and Seatbelt with
// EPERM, and some programs call a refused write a read-only file system.
var refusalWords = []string{"permission denied", "operation not permitted", "read-only file system"}

// quotedPath finds the paths a message names: `'/x/y'`, `"/x/y"`, or
// `/x/y:` as bash, touch, mkdir and cp print them.
var quotedPath = regexp.MustCompile(`['"‘“]([^'"’”]+)['"’”]|(?:^|\s)(/[^\s:'"]+|\.{0,2}/?[^\s:'"/]+(?:/[^\s:'"]+)+):`)

// Refusal reads a failed command's output for a sign that the sandbox
// refused it, and returns the line that says so (what the permission
// prompt names). It is a heuristic, and says so in the docs: the kernel
// reports no "refused by the sandbox" to the program's parent. A line
// with EACCES or EPERM words counts unless every path it names lies
// where p lets the command write (a plain permission problem there is
// not the sandbox's doing); a line without a path (a refused connect)
// counts. cwd resolves relative paths. Nothing counts for a command that
// succeeded or ran unconfined.
func Refusal(p *Policy, cwd string, exitCode int, output string) (line string, ok bool) {
	if !p.Confined() || exitCode == 0 {
		return "", false
	}
	for _, l := range strings.Split(output, "\n") {
		low := strings.ToLower(l)
		hit := false
		for _, w := range refusalWords {
			if strings.Contains(low, w) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		if paths := pathsIn(l); len(paths) > 0 && allInside(paths, cwd, p.Writable()) {
			continue
		}
		return strings.TrimSpace(l), true
	}
	return "", false
}

func pathsIn(line string) []string {
	var out []string
	for _, m := range quotedPath.FindAllStringSubmatch(line, -1) {
		for _, g := range m[1:] {
			if g != "" && (strings.Contains(g, "/") || strings.HasPrefix(g, ".")) {
				out = append(out, g)
			}
		}
	}
	return out
}

func allInside(paths []string, cwd string, dirs []string) bool {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		in := false
		for _, d := range dirs {
			if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}
