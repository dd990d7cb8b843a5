package agent

import (
	"context"
	"github.com/acp-bridge/acp-bridge/internal/atomicfile"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
)

// Files is one session's file access for tools (registry.Files). Reads and
// writes go through the editor (fs/read_text_file, fs/write_text_file) when
// the client advertised them, so the model sees unsaved buffers and the
// editor's review tracks the agent's edits; otherwise, or when the editor
// refuses a path (Zed serves only its worktrees), through the disk.
//
// The rule for reads: a file the agent itself changed on disk since is read
// from disk, because the editor's buffer may not have caught up with the
// change. The agent changed a file on disk when
//   - write or edit wrote it to disk (the editor did not take the write) and
//     the file still carries the modification time and size that write left, or
//   - its modification time falls within a command the agent ran (bash),
//     from the command's start to its end: a command can write any file.
//
// A file larger than EditorReadMax on disk is read from disk too: its text
// in one fs/read_text_file response could pass the editor's message limit,
// and a response the editor cannot send leaves the read hanging.
//
// Files also keeps the session's read-tracking (what version of each file
// the session has seen) for the fs tools' read-before-edit rule; see
// tools/fs.Tracker. Versions are content hashes.
type Files struct {
	client      acp.Client
	session     string
	editorRead  bool
	editorWrite bool
	log         *slog.Logger
	now         func() time.Time

	mu      sync.Mutex
	seen    map[string]string // path -> diffs.Hash of the version the session saw
	written map[string]stamp  // path -> what our last disk write left
	windows []window          // when commands ran
}

// EditorReadMax is the largest file (bytes on disk) read through the editor.
const EditorReadMax = 4 << 20

type stamp struct {
	mod  time.Time
	size int64
}

// window is a span in which a command ran; end is zero while it runs.
type window struct{ start, end time.Time }

// mtimeSlack allows for file timestamps that come from a coarse clock and so
// may read a little earlier than the moment the command started.
const mtimeSlack = 20 * time.Millisecond

// NewFiles returns the file access of one session. caps are what the client
// advertised at initialize; logger may be nil.
func NewFiles(client acp.Client, sessionID string, caps acp.FileSystemCapabilities, logger *slog.Logger) *Files {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Files{client: client, session: sessionID, editorRead: caps.ReadTextFile && client != nil,
		editorWrite: caps.WriteTextFile && client != nil, log: logger, now: time.Now,
		seen: map[string]string{}, written: map[string]stamp{}}
}

// ReadText returns the file's text: the editor's buffer, unless the rule
// above sends the read to the disk.
func (f *Files) ReadText(ctx context.Context, path string) (string, error) {
	path = filepath.Clean(path)
	if f.editorRead && !f.ChangedOnDisk(path) && !largeOnDisk(path) {
		resp, err := f.client.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: f.session, Path: path})
		if err == nil {
			return resp.Content, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		f.log.Debug("fs/read_text_file failed; reading the disk", "session", f.session, "path", path, "err", err)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

func largeOnDisk(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() > EditorReadMax
}

// WriteText replaces the file's content: through the editor when it takes
// writes, else atomically on disk (remembered, so reads follow the rule).
func (f *Files) WriteText(ctx context.Context, path, content string) error {
	path = filepath.Clean(path)
	if f.editorWrite {
		err := f.client.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: f.session, Path: path, Content: content})
		if err == nil {
			f.mu.Lock()
			delete(f.written, path) // the editor has the latest version now
			f.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f.log.Debug("fs/write_text_file failed; writing the disk", "session", f.session, "path", path, "err", err)
	}
	if err := atomicfile.Write(path, []byte(content)); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		f.mu.Lock()
		f.written[path] = stamp{st.ModTime(), st.Size()}
		f.mu.Unlock()
	}
	return nil
}

// ChangedOnDisk reports whether the agent changed path on disk behind the
// editor's back (the rule in the type's doc).
func (f *Files) ChangedOnDisk(path string) bool {
	st, err := os.Stat(filepath.Clean(path))
	if err != nil {
		return false
	}
	mod := st.ModTime()
	f.mu.Lock()
	defer f.mu.Unlock()
	if w, ok := f.written[filepath.Clean(path)]; ok && w.mod.Equal(mod) && w.size == st.Size() {
		return true
	}
	for _, w := range f.windows {
		if !mod.Before(w.start.Add(-mtimeSlack)) && (w.end.IsZero() || !mod.After(w.end)) {
			return true
		}
	}
	return false
}

// BeginDiskChanges marks the start of a command that may write files; the
// returned func marks its end. (tools/bash.DiskChanges)
func (f *Files) BeginDiskChanges() (end func()) {
	f.mu.Lock()
	f.windows = append(f.windows, window{start: f.now()})
	i := len(f.windows) - 1
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.windows[i].end = f.now()
			f.mu.Unlock()
		})
	}
}

// MarkRead records the content of hash (its diffs.Hash) as the version of
// path the session has seen. (tools/fs.Tracker)
func (f *Files) MarkRead(path, hash string) {
	f.mu.Lock()
	f.seen[filepath.Clean(path)] = hash
	f.mu.Unlock()
}

// ReadState reports whether the session has seen path, and whether the
// content of hash is still the version it saw. (tools/fs.Tracker)
func (f *Files) ReadState(path, hash string) (seen, current bool) {
	f.mu.Lock()
	h, ok := f.seen[filepath.Clean(path)]
	f.mu.Unlock()
	return ok, ok && h == hash
}
