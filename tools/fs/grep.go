package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/google/jsonschema-go/jsonschema"
	iofs "io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/acp-bridge/acp-bridge/registry"
)

const (
	grepLimit      = 250 // matches per call
	grepLineLength = 500 // characters of a matching line shown
)

type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"The regular expression to search for"`
	Path    string `json:"path,omitempty" jsonschema:"The file or directory to search, absolute or relative to the workspace root (default: the workspace root)"`
	Include string `json:"include,omitempty" jsonschema:"Only search files whose name matches this glob, e.g. \"*.go\""`
}

// GrepMatch is one matching line.
type grepMatch struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

type grepFile struct {
	Path    string      `json:"path"`
	Matches []grepMatch `json:"matches"`
}

type grepOut struct {
	Files   []grepFile `json:"files"` // in path order
	Matches int        `json:"matches"`
	Capped  bool       `json:"capped,omitempty"` // more matches exist than shown
}

func grepTool() registry.Tool[grepArgs, grepOut] {
	return registry.Tool[grepArgs, grepOut]{
		Name:  "grep",
		Facts: registry.Facts{ReadOnly: true, Kind: "search"},
		Description: "Search file contents with a Go regular expression (RE2 syntax; ^ and $ match at line boundaries). " +
			"Returns at most 250 matching lines grouped by file, as \"N: text\". include filters files by name " +
			"(\"*.go\", \"*.{ts,tsx}\"). Binary files, files ignored by .gitignore and VCS directories are skipped.",
		Schema: func(s *jsonschema.Schema) { s.Properties["pattern"].MinLength = jsonschema.Ptr(1) },
		Run:    runGrep,
		Render: func(_ grepArgs, out grepOut) []registry.Content {
			return []registry.Content{registry.Text(renderGrep(out))}
		},
		Meta:            grepMeta,
		ConcurrencySafe: func(grepArgs) bool { return true },
		PresentCall: func(in grepArgs) registry.View {
			return registry.GenericCard{Title: searchTitle("Grep", in.Pattern, in.Path, in.Include), Kind: "search"}
		},
		PresentResult: func(in grepArgs, r registry.Result) registry.View {
			card := registry.GenericCard{Title: searchTitle("Grep", in.Pattern, in.Path, in.Include), Kind: "search"}
			var m struct {
				Locations []registry.Location `json:"locations"`
			}
			if !r.IsError && json.Unmarshal(r.Meta, &m) == nil {
				card.Locations = m.Locations
			}
			return card
		},
		Permission: func(c *registry.Call, in grepArgs) *registry.Permission {
			return outsidePermission(c, resolve(c.Cwd, in.Path), "search")
		},
	}
}

// grepMeta stores every shown match as a card location (absolute path, line).
func grepMeta(_ grepArgs, out grepOut) any {
	var locs []registry.Location
	for _, f := range out.Files {
		for _, m := range f.Matches {
			locs = append(locs, registry.Location{Path: f.Path, Line: m.Line})
		}
	}
	return map[string]any{"locations": locs}
}

func renderGrep(out grepOut) string {
	if out.Matches == 0 {
		return "No matches found"
	}
	var b strings.Builder
	if out.Capped {
		fmt.Fprintf(&b, "Found more than %d matches; showing the first %d. Narrow the pattern, path or include to see the rest.\n", grepLimit, out.Matches)
	} else {
		fmt.Fprintf(&b, "Found %d matches in %d files\n", out.Matches, len(out.Files))
	}
	for i, f := range out.Files {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(f.Path + ":\n")
		for _, m := range f.Matches {
			fmt.Fprintf(&b, "  %d: %s\n", m.Line, m.Text)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func runGrep(ctx context.Context, c *registry.Call, in grepArgs) (grepOut, error) {
	root := resolve(c.Cwd, in.Path)
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return grepOut{}, registry.Errorf("INVALID_ARGS", fmt.Sprintf("invalid regular expression %q: %v", in.Pattern, err))
	}
	var include *globMatcher
	if in.Include != "" {
		if include, err = newGlobMatcher(in.Include); err != nil {
			return grepOut{}, registry.Errorf("INVALID_ARGS", fmt.Sprintf("invalid include pattern %q: %v", in.Include, err))
		}
	}
	st, err := os.Stat(root)
	if err != nil {
		return grepOut{}, registry.Errorf("FS_NOT_FOUND", fmt.Sprintf("path not found: %s", root))
	}
	s := &searcher{re: re, limit: grepLimit + 1}
	if s.lits = literals(in.Pattern); s.lits == nil {
		s.whole = prefilter(in.Pattern)
	}
	if !st.IsDir() {
		fm, err := s.file(&walkEntry{abs: root}, &grepWorker{})
		if err != nil {
			return grepOut{}, registry.Errorf("FS_ERROR", err.Error())
		}
		return collect([]grepFile{{Path: root, Matches: fm}}), nil
	}
	return s.tree(ctx, c, root, include)
}

// collect turns per-file matches (in path order) into the capped result.
func collect(files []grepFile) grepOut {
	var out grepOut
	for _, f := range files {
		if len(f.Matches) == 0 {
			continue
		}
		if left := grepLimit - out.Matches; len(f.Matches) > left {
			out.Capped = true
			if left == 0 {
				break
			}
			f.Matches = f.Matches[:left]
		}
		out.Files = append(out.Files, f)
		out.Matches += len(f.Matches)
	}
	return out
}

// prefilter returns a regexp that rejects whole files at once, for a
// pattern without literals: any file with a matching line matches it. (?m)
// gives ^ its per-line meaning. It is nil (every file is searched line by
// line) when the pattern uses $, \A or \z: a "\r\n" line end or the
// buffer's ends would make it disagree.
func prefilter(pattern string) *regexp.Regexp {
	re, err := syntax.Parse("(?m)"+pattern, syntax.Perl)
	if err != nil || usesAnchors(re) {
		return nil
	}
	return regexp.MustCompile("(?m)" + pattern)
}

func usesAnchors(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEndLine, syntax.OpEndText, syntax.OpBeginText:
		return true
	}
	for _, sub := range re.Sub {
		if usesAnchors(sub) {
			return true
		}
	}
	return false
}

// searcher is one grep call: the pattern and what narrows it.
type searcher struct {
	re    *regexp.Regexp
	lits  *litSet        // lines without one of these cannot match; nil when the pattern has none
	whole *regexp.Regexp // without literals: files this rejects cannot match (nil: none rejected)
	limit int            // matches worth finding in one file
}

// grepWorker is what one searching goroutine reuses from file to file.
type grepWorker struct {
	buf  []byte
	name []byte // a file's name for openat, NUL-terminated
	sc   scanner
}

// tree searches every file under root with a bounded pool of workers.
// Files are numbered in walk order and results are taken in that order,
// so the first matches by path are the ones shown, and the walk stops
// once they are known.
func (s *searcher) tree(ctx context.Context, c *registry.Call, root string, include *globMatcher) (grepOut, error) {
	parent := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	// Files go to the workers, and come back, in batches of consecutive
	// files: a channel send per file cost more than searching most of
	// them. A batch's number is its place in walk order.
	type job struct {
		seq   int
		files []*walkEntry // the walk's own entries, not copies
	}
	type done struct {
		seq   int
		files []grepFile
	}
	// Short queues: what is queued is read even when the first matches
	// already fill the result, and most searches stop early.
	jobs := make(chan job, 2)
	results := make(chan done, 2)
	go func() {
		defer close(jobs)
		seq := 0
		batch := make([]*walkEntry, 0, grepBatch)
		send := func() error {
			select {
			case jobs <- job{seq, batch}:
				seq, batch = seq+1, make([]*walkEntry, 0, grepBatch)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		opt := walkOptions{openFiles: true}
		if include != nil {
			opt.keep = include.match
		}
		err := walkFiles(ctx, root, opt, func(e *walkEntry) error {
			if e.typ&iofs.ModeSymlink != 0 {
				// Followed only to a regular file inside the roots: a link
				// out of the workspace is not read. Opened by its path,
				// which follows it.
				e.done()
				st, err := os.Stat(e.abs)
				if err != nil || !st.Mode().IsRegular() || !inRoots(c, e.abs) {
					return nil
				}
			} else if !e.typ.IsRegular() {
				e.done()
				return nil
			}
			if batch = append(batch, e); len(batch) == grepBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		if err != nil {
			for i := range batch {
				batch[i].done() // never sent: their directories may close
			}
		}
	}()
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			w := &grepWorker{}
			for j := range jobs {
				var files []grepFile
				for _, e := range j.files {
					if ctx.Err() != nil {
						e.done() // stopped: the rest is not read
						continue
					}
					m, _ := s.file(e, w) // unreadable files are skipped
					if len(m) > 0 {
						files = append(files, grepFile{Path: e.abs, Matches: m})
					}
				}
				if ctx.Err() != nil {
					continue // stopped: drain the queue without reading
				}
				select {
				case results <- done{j.seq, files}:
				case <-ctx.Done():
				}
			}
		}()
	}
	go func() { workers.Wait(); close(results) }()

	pending := map[int][]grepFile{}
	var ordered []grepFile
	next, found := 0, 0
	take := func(files []grepFile) {
		next++
		for _, f := range files {
			ordered = append(ordered, f)
			found += len(f.Matches)
		}
	}
	for r := range results {
		if r.seq != next || len(pending) > 0 {
			pending[r.seq] = r.files
		} else {
			take(r.files) // in order: the common case, no map traffic
		}
		for f, ok := pending[next]; ok; f, ok = pending[next] {
			delete(pending, next)
			take(f)
		}
		if found > grepLimit {
			stop() // the first grepLimit+1 matches in path order are known
		}
	}
	if err := parent.Err(); err != nil {
		return grepOut{}, err // cancelled by the caller, not by our early stop
	}
	return collect(ordered), nil
}

// relTo is abs relative to root, which holds it.
func relTo(root, abs string) string {
	if rel, ok := strings.CutPrefix(abs, root); ok && len(rel) > 0 && rel[0] == filepath.Separator {
		return rel[1:]
	}
	rel, _ := filepath.Rel(root, abs)
	return rel
}

// grepBatch is how many files go to a worker at once: enough that the
// channel traffic is small next to the search, few enough that a search
// that stops early (the first matches found) reads little past them.
const grepBatch = 8

// binaryHead is how much of a file's start is checked for a NUL byte.
const binaryHead = 8192

// grepChunk is how much of a file one read takes. Files are searched a
// chunk of whole lines at a time in one buffer per worker, as ripgrep
// does: a buffer this size stays in the processor's cache between the read
// and the search, and reusing it means no allocation, no zeroing and no
// page faults per file. Reading files whole cost the first search of a
// large tree more than the search itself: growing a buffer for every file
// over 64 KB, and dropping those over 1 MB. A variable so tests cross chunk
// boundaries with small files; at least binaryHead.
var grepChunk = 256 << 10

// grepMaxLine bounds the buffer a single line may grow it to; the rest of
// a file with a longer line is not searched.
const grepMaxLine = 16 << 20

// file returns the matching lines of one file (at most s.limit), or none
// for a binary file. Raw system calls, because os.File's setup
// (non-blocking mode, poller registration) costs more than reading a small
// file, and grep opens every file of a tree. The file is opened by name in
// its directory where the walk kept that open (walkEntry.in).
func (s *searcher) file(e *walkEntry, w *grepWorker) ([]grepMatch, error) {
	var fd fileHandle
	var err error
	if e.in != nil {
		fd, err = e.in.d.open(e.name, &w.name)
		e.done()
	} else {
		fd, err = openFile(e.abs)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: e.abs, Err: err}
	}
	defer syscall.Close(fd)
	return s.read(fd, e.abs, w)
}

// openFile opens a file by its path, read-only.
func openFile(path string) (fileHandle, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// read returns the matching lines of the open file fd, named path.
func (s *searcher) read(fd fileHandle, path string, w *grepWorker) ([]grepMatch, error) {
	if cap(w.buf) < grepChunk {
		w.buf = make([]byte, 0, grepChunk)
	}
	defer func() {
		if cap(w.buf) > 4*grepChunk {
			w.buf = nil // a buffer grown for a long line is not kept
		}
	}()
	var out []grepMatch
	buf := w.buf[:0]
	line := 1 // the number of the line buf starts with
	checked := false
	var off int64 // the file offset of buf[0]
	// A line longer than the buffer is read whole only when it may match:
	// while none of the scan's literals is in it, its start is dropped as
	// it is read (skipping, from lineAt on) and only a literal's length of
	// it kept; if one turns up, the line is read again from its start,
	// whole (grow). Go's own tree has a 1.4 MB line of zip data: growing
	// a buffer for it was 3.5 MB allocated, and a thousand page faults, in
	// every search of the tree.
	skipping, grow := false, false
	var lineAt int64
	for {
		want := cap(buf) - len(buf)
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return out, &os.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		// A regular file reads short only at its end: no read that
		// would return 0, a third of grep's system calls.
		eof := n < want
		if !checked && (len(buf) >= binaryHead || eof) {
			checked = true
			if bytes.IndexByte(buf[:min(len(buf), binaryHead)], 0) >= 0 {
				return nil, nil // binary: the rest is not read
			}
		}
		if skipping {
			j := bytes.IndexByte(buf, '\n')
			rest := buf
			if j >= 0 {
				rest = buf[:j]
			}
			switch {
			case s.lits.anyIn(rest):
				// It may match after all: read it again, whole.
				if _, err := syscall.Seek(fd, lineAt, 0); err != nil {
					return out, &os.PathError{Op: "seek", Path: path, Err: err}
				}
				off, buf, skipping, grow = lineAt, buf[:0], false, true
				continue
			case j < 0 && eof:
				return out, nil
			case j < 0:
				off, buf = s.lits.keepTail(off, buf)
				continue
			}
			// The line ends here without a literal: it cannot match.
			line++
			off += int64(j + 1)
			buf = buf[:copy(buf, buf[j+1:])]
			skipping = false
		}
		end := len(buf) // whole lines only, but everything at the end
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
		}
		if end == 0 && !eof {
			switch {
			case len(buf) < cap(buf):
				continue // what a skipped line left: fill the buffer
			case !grow && s.lits != nil && !s.lits.anyIn(buf):
				skipping, lineAt = true, off
				off, buf = s.lits.keepTail(off, buf)
				continue
			case cap(buf) >= grepMaxLine:
				return out, nil
			}
			// One line longer than the buffer that may match: make room
			// for it.
			buf = slices.Grow(buf, cap(buf))
			w.buf = buf
			continue
		}
		grow = false
		out, line = s.lines(buf[:end], line, out, &w.sc)
		if eof || len(out) >= s.limit {
			return out, nil
		}
		off += int64(end)
		buf = buf[:copy(buf, buf[end:])]
	}
}

// lines appends to out the matching lines of data, which holds whole
// lines, the first of them numbered line, and returns the number of the
// line after data. Lines are counted as they are searched, in the same
// pass; once out is full the count no longer matters.
func (s *searcher) lines(data []byte, line int, out []grepMatch, sc *scanner) ([]grepMatch, int) {
	if s.lits != nil {
		return s.candidates(data, line, out, sc)
	}
	if s.whole != nil && !s.whole.Match(data) {
		return out, line + bytes.Count(data, []byte{'\n'})
	}
	for ; len(data) > 0 && len(out) < s.limit; line++ {
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		text = bytes.TrimSuffix(text, []byte("\r"))
		if s.re.Match(text) {
			out = append(out, grepMatch{Line: line, Text: shortLine(text)})
		}
	}
	return out, line
}

// candidates runs the regexp only on the lines of data that hold one of
// the literals, counting lines as it skips, and returns the number of the
// line after data: each byte is counted once, up to a candidate as it is
// reached and past the last one at the end.
func (s *searcher) candidates(data []byte, line int, out []grepMatch, sc *scanner) ([]grepMatch, int) {
	s.lits.scanner(data, sc)
	counted := 0 // line is the number of the line at offset counted
	for pos := 0; pos < len(data) && len(out) < s.limit; {
		i := sc.find(pos)
		if i < 0 {
			break
		}
		start := pos + bytes.LastIndexByte(data[pos:i], '\n') + 1
		end := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			end = i + j
		}
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		text := bytes.TrimSuffix(data[start:end], []byte("\r"))
		if s.lits.holds(text) && s.re.Match(text) {
			out = append(out, grepMatch{Line: line, Text: shortLine(text)})
		}
		pos = end + 1
	}
	return out, line + bytes.Count(data[counted:], []byte{'\n'})
}

func shortLine(b []byte) string {
	if utf8.RuneCount(b) <= grepLineLength {
		return string(b)
	}
	r := []rune(string(b))
	return string(r[:grepLineLength]) + "… (line truncated)"
}
