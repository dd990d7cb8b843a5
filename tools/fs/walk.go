package fs

import (
	"bufio"
	"context"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// vcsDir reports the directories never searched: version-control
// metadata, not workspace files.
func vcsDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", ".jj":
		return true
	}
	return false
}

// ignoreRule is one line of a .gitignore, relative to the directory holding it.
type ignoreRule struct {
	dir      string   // absolute directory of the .gitignore
	segs     []string // pattern split on "/"; one segment when it matches names at any depth
	anchored bool     // the pattern had a "/" before its end: matched from dir
	dirOnly  bool     // trailing "/": matches directories only
	negate   bool     // leading "!": re-includes
}

// parseIgnore reads the rules of one .gitignore file (none if absent).
func parseIgnore(dir string) []ignoreRule {
	f, err := os.Open(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var rules []ignoreRule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(dir, sc.Text()); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseIgnoreLine(dir, line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	r := ignoreRule{dir: dir}
	if line[0] == '!' {
		r.negate, line = true, line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	r.segs = strings.Split(line, "/")
	return r, true
}

// match reports whether the rule matches abs, named name (a directory when
// isDir). A rule is only asked about paths below its directory, as a walk
// adds a directory's rules for what is under it.
func (r ignoreRule) match(abs, name string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		return matchName(r.segs[0], name)
	}
	rel, ok := below(r.dir, abs)
	return ok && matchRel(r.segs, rel)
}

// below returns abs relative to dir, with "/" separators, when abs is
// strictly below dir (both clean and absolute, as a walk makes them).
func below(dir, abs string) (string, bool) {
	rel, ok := strings.CutPrefix(abs, dir)
	switch {
	case !ok:
		return "", false
	case strings.HasSuffix(dir, string(filepath.Separator)): // the file system root
	case rel == "" || rel[0] != filepath.Separator:
		return "", false
	default:
		rel = rel[1:]
	}
	if rel == "" {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// matchName is path.Match for one path segment, with the shapes most
// patterns have ("name", "*.go") matched without the general matcher.
// Malformed patterns match nothing, as with path.Match.
func matchName(pat, name string) bool {
	switch i := strings.IndexAny(pat, `*?[\`); {
	case i < 0:
		return pat == name
	case i == 0 && pat[0] == '*' && !strings.ContainsAny(pat[1:], `*?[\`):
		return strings.HasSuffix(name, pat[1:])
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// matchRel matches a relative path ("a/b/c", at least one segment)
// against pattern segments, "**" standing for any number of segments (none
// included). It walks the path's segments in place: every entry of a walk
// is asked about every anchored rule in force, and splitting each path into
// a new slice was most of what matching .gitignore rules cost.
func matchRel(pat []string, rel string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			// pat[1] is not "**", so it needs a segment: try each suffix.
			for {
				if matchRel(pat[1:], rel) {
					return true
				}
				i := strings.IndexByte(rel, '/')
				if i < 0 {
					return false
				}
				rel = rel[i+1:]
			}
		}
		seg, rest, more := strings.Cut(rel, "/")
		if !matchName(pat[0], seg) {
			return false
		}
		pat = pat[1:]
		if !more {
			// The path is used up: what is left of the pattern must match
			// no segments, which only "**" does.
			for _, p := range pat {
				if p != "**" {
					return false
				}
			}
			return true
		}
		rel = rest
	}
	return false // segments left over
}

// ignorer holds the rules in force for a directory: its ancestors' and its own.
type ignorer struct{ rules []ignoreRule }

func (ig *ignorer) ignored(abs, name string, isDir bool) bool {
	ignored := false
	for _, r := range ig.rules {
		if r.match(abs, name, isDir) {
			ignored = !r.negate
		}
	}
	return ignored
}

// with returns the ignorer for a subdirectory that may add its own rules.
func (ig *ignorer) with(dir string) *ignorer {
	rules := parseIgnore(dir)
	if len(rules) == 0 {
		return ig
	}
	return &ignorer{rules: append(append([]ignoreRule(nil), ig.rules...), rules...)}
}

// rootIgnorer collects the .gitignore rules of root's ancestors up to the
// repository root (the directory holding .git), so searching a subdirectory
// ignores what the repository ignores. Outside a repository only root's
// own rules and those below it apply.
func rootIgnorer(root string) *ignorer {
	var dirs []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		if filepath.Dir(d) == d {
			dirs = nil // no repository above root
			break
		}
	}
	ig := &ignorer{}
	for i := len(dirs) - 1; i >= 0; i-- {
		ig = ig.with(dirs[i])
	}
	return ig
}

// walkFiles calls fn for every file under root in lexical order, skipping
// what .gitignore ignores and VCS metadata. Symlinked directories are not
// followed; symlinks are passed to fn as they are (typ tells).
//
// Directories are read ahead by a bounded pool of goroutines, which also
// run opt.keep and take modification times, while fn runs on the caller's
// goroutine, one file after another in walk order.
func walkFiles(ctx context.Context, root string, opt walkOptions, fn func(*walkEntry) error) error {
	w := newWalker(ctx, root, opt)
	defer w.close()
	top := &dirNode{abs: root, ig: rootIgnorer(root), done: make(chan struct{})}
	return w.visit(top, fn)
}

// walkOptions say what the pool does for each file it lists.
type walkOptions struct {
	// keep, when set, is asked about each file by its path relative to
	// the root; fn sees only the files it keeps.
	keep func(rel string) bool
	// modTime asks for each kept file's modification time, taken with
	// fstatat on the open directory (no lookup of the whole path).
	modTime bool
	// openFiles says the caller opens the files it is given (grep): a
	// directory's descriptor is then kept open for them (walkEntry.in), so
	// each is opened by its name in its directory instead of by its whole
	// path, which the kernel would walk again from the root: a fifth of a
	// large search's CPU went to that walk (BENCHMARKS.md).
	openFiles bool
}

// heldDir is a directory kept open for the files listed in it, until each
// has been opened or passed over. It holds one reference for the walk,
// dropped once the walk has handed out its files (or ends without), and
// one for each file handed out, dropped by whoever takes the file
// (walkEntry.done).
type heldDir struct {
	d      openDir
	refs   atomic.Int32
	walk   sync.Once
	budget *atomic.Int32 // the walker's count of held directories
}

// drop releases one reference; the last closes the directory.
func (h *heldDir) drop() {
	if h.refs.Add(-1) == 0 {
		h.d.close()
		h.budget.Add(-1)
	}
}

// dropWalk releases the walk's own reference, once.
func (h *heldDir) dropWalk() { h.walk.Do(h.drop) }

// maxHeldDirs bounds the directories a walk keeps open at once: the ones
// read ahead and not yet visited, and those whose files are still queued.
// Past it a directory is closed once listed, and its files are opened by
// their whole path, as before.
var maxHeldDirs int32 = 256 // a variable so a test can cross it

// dirNode is one directory of a walk, read by whichever goroutine claims
// it first: a worker reading ahead, or the walk itself when it gets there.
type dirNode struct {
	abs     string
	ig      *ignorer // the rules of its parent; its own .gitignore is added when read
	claimed atomic.Bool
	done    chan struct{} // closed once entries are set
	entries []walkEntry
	held    *heldDir // the directory, kept open for its files (walkOptions.openFiles)
}

// walkEntry is a file, or a subdirectory (dir set) to descend into.
type walkEntry struct {
	abs string
	typ iofs.FileMode // the type bits of its directory entry
	mod time.Time     // with walkOptions.modTime; zero when it could not be taken
	dir *dirNode
	// in is the file's directory, open, with walkOptions.openFiles where
	// the platform and the budget allow; name is the file's name in it.
	// Whoever takes a file with in set calls done exactly once.
	in   *heldDir
	name string
}

// done says the entry's file has been opened or passed over: its
// directory may close.
func (e *walkEntry) done() {
	if e.in != nil {
		e.in.drop()
		e.in = nil
	}
}

// dirEntry is one name of a directory listing.
type dirEntry struct {
	name string
	typ  iofs.FileMode // type bits only, not following a symlink
}

// dirBuf is the size of the buffer a directory is listed with.
const dirBuf = 32 << 10

// walkAhead bounds the entries read ahead and not yet visited, so a
// monorepo's walk holds a window of it, not all of it.
const walkAhead = 1 << 10

type walker struct {
	ctx     context.Context
	root    string
	opt     walkOptions
	mu      sync.Mutex
	cond    *sync.Cond
	buf     []byte     // the visiting goroutine's, for directories it reads itself
	stack   []*dirNode // unread directories, the next one to visit on top
	ahead   int        // entries read and not yet visited
	closed  bool
	workers sync.WaitGroup
	held    []*heldDir   // every directory kept open, for close
	nheld   atomic.Int32 // how many are open now
}

func newWalker(ctx context.Context, root string, opt walkOptions) *walker {
	w := &walker{ctx: ctx, root: root, opt: opt}
	w.cond = sync.NewCond(&w.mu)
	for range runtime.GOMAXPROCS(0) {
		w.workers.Add(1)
		go w.work()
	}
	return w
}

func (w *walker) close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	w.workers.Wait()
	// A directory read ahead and never visited (the walk stopped) still
	// has the walk's reference; one visited has dropped it already.
	for _, h := range w.held {
		h.dropWalk()
	}
}

// work reads directories ahead of the walk.
func (w *walker) work() {
	defer w.workers.Done()
	buf := make([]byte, dirBuf)
	for {
		w.mu.Lock()
		for !w.closed && (len(w.stack) == 0 || w.ahead > walkAhead) {
			w.cond.Wait()
		}
		if w.closed {
			w.mu.Unlock()
			return
		}
		n := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.mu.Unlock()
		if n.claimed.CompareAndSwap(false, true) {
			w.read(n, buf)
		}
	}
}

// read lists n, keeping what is neither ignored nor VCS metadata, and
// offers its subdirectories to the workers, first one on top. buf is the
// caller's, for the system call that lists it.
func (w *walker) read(n *dirNode, buf []byte) {
	defer close(n.done)
	if w.ctx.Err() != nil {
		return
	}
	d, err := openDirectory(n.abs)
	if err != nil {
		return // unreadable directories are skipped, as a search tool does
	}
	var held *heldDir
	defer func() {
		if held == nil {
			d.close()
		}
	}()
	entries, err := d.entries(buf)
	if err != nil && len(entries) == 0 {
		return
	}
	slices.SortFunc(entries, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	ig := n.ig
	for _, e := range entries {
		if e.name == ".gitignore" {
			ig = ig.with(n.abs)
			break
		}
	}
	sep := string(filepath.Separator)
	if strings.HasSuffix(n.abs, sep) {
		sep = ""
	}
	var subs []*dirNode
	out := make([]walkEntry, 0, len(entries))
	for _, e := range entries {
		name := e.name
		abs := n.abs + sep + name
		if e.typ.IsDir() {
			if vcsDir(name) || ig.ignored(abs, name, true) {
				continue
			}
			sub := &dirNode{abs: abs, ig: ig, done: make(chan struct{})}
			subs = append(subs, sub)
			out = append(out, walkEntry{abs: abs, dir: sub})
			continue
		}
		if ig.ignored(abs, name, false) || w.opt.keep != nil && !w.opt.keep(relTo(w.root, abs)) {
			continue
		}
		we := walkEntry{abs: abs, typ: e.typ, name: abs[len(abs)-len(name):]}
		if w.opt.modTime {
			we.mod, _ = d.modTime(name)
		}
		out = append(out, we)
	}
	if len(out) > len(subs) {
		held = w.hold(d, out)
	}
	n.entries, n.held = out, held
	w.mu.Lock()
	if held != nil {
		w.held = append(w.held, held)
	}
	w.ahead += len(out)
	for i := len(subs) - 1; i >= 0; i-- {
		w.stack = append(w.stack, subs[i])
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

// hold keeps d open for the files among out, when the walk's caller opens
// files, the platform opens them by name in a directory, and the budget
// has room; nil otherwise.
func (w *walker) hold(d openDir, out []walkEntry) *heldDir {
	if !w.opt.openFiles || !holdDirs {
		return nil
	}
	if w.nheld.Add(1) > maxHeldDirs {
		w.nheld.Add(-1)
		return nil
	}
	h := &heldDir{d: d, budget: &w.nheld}
	h.refs.Store(1)
	for i := range out {
		if out[i].dir == nil {
			out[i].in = h
		}
	}
	return h
}

// visit calls fn for the files of n and its subdirectories, in order.
func (w *walker) visit(n *dirNode, fn func(*walkEntry) error) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if n.claimed.CompareAndSwap(false, true) {
		if w.buf == nil {
			w.buf = make([]byte, dirBuf)
		}
		w.read(n, w.buf)
	} else {
		<-n.done
	}
	entries := n.entries
	n.entries = nil
	if n.held != nil {
		defer n.held.dropWalk()
	}
	defer func() {
		w.mu.Lock()
		w.ahead -= len(entries)
		w.cond.Broadcast()
		w.mu.Unlock()
	}()
	for i := range entries {
		e := &entries[i]
		if e.dir != nil {
			if err := w.visit(e.dir, fn); err != nil {
				return err
			}
			continue
		}
		if e.in != nil {
			e.in.refs.Add(1) // fn's, dropped by whoever takes the file
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// expandBraces turns "*.{ts,tsx}" into "*.ts" and "*.tsx" (one level of
// braces, which path.Match lacks).
func expandBraces(p string) []string {
	i := strings.IndexByte(p, '{')
	j := strings.IndexByte(p[i+1:], '}')
	if i < 0 || j < 0 {
		return []string{p}
	}
	j += i + 1
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

// globMatcher matches paths relative to a search root: a pattern without
// "/" matches the file name at any depth (as .gitignore and ripgrep's
// --glob do); one with "/" matches the whole relative path, "**" spanning
// directories.
type globMatcher struct{ pats [][]string }

func newGlobMatcher(pattern string) (*globMatcher, error) {
	m := &globMatcher{}
	for _, p := range expandBraces(pattern) {
		p = strings.TrimPrefix(p, "./")
		segs := strings.Split(p, "/")
		for _, s := range segs {
			if _, err := path.Match(s, ""); err != nil {
				return nil, err
			}
		}
		if len(segs) == 1 {
			segs = []string{"**", segs[0]}
		}
		m.pats = append(m.pats, segs)
	}
	return m, nil
}

func (m *globMatcher) match(rel string) bool {
	rel = filepath.ToSlash(rel)
	for _, p := range m.pats {
		if len(p) == 2 && p[0] == "**" && p[1] != "**" {
			// "**/x" is x against the name alone.
			if matchName(p[1], path.Base(rel)) {
				return true
			}
			continue
		}
		if matchRel(p, rel) {
			return true
		}
	}
	return false
}
