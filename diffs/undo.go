package diffs

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/acp-bridge/acp-bridge/registry"
)

// Undo is what a tool that changed a file records with its result so the
// change can be taken back later (a rewind, agent/rewindfiles.go): the
// file's content before and after, by hash, and the whole text before only
// when the hunks cannot give it back exactly (Revert). A file the tool
// created has no Before. The hashes let the rewind restore a file only
// while it is still exactly as the tool left it.
type Undo struct {
	Path    string  `json:"path"`
	Created bool    `json:"created,omitempty"`
	Before  string  `json:"before,omitempty"` // Hash of the content before; "" when created
	After   string  `json:"after"`            // Hash of the content as left
	Old     *string `json:"old,omitempty"`    // the content before, when Revert of the hunks is not it
}

// Hash is the hex SHA-256 of a file's content, the form Undo records.
func Hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Version is a file's content and its Hash, taken once: a change's Undo
// and the session's read-tracking (tools/fs.Tracker, agent/files.go) both
// know a version of a file by that hash.
type Version struct {
	Text string
	Hash string
}

// VersionOf is text with its Hash.
func VersionOf(text string) Version { return Version{text, Hash(text)} }

// Record is the Undo of a change of path from old (nil: the file did not
// exist) to saved whose hunks are hunks. The old text is kept whole only
// when reverting the hunks on saved does not give it back byte for byte
// (line endings changed, a hunk that is not unique): most edits cost two
// hashes in the log, not a copy of the file.
func Record(path string, old *Version, saved Version, hunks []registry.FileDiff) Undo {
	u := Undo{Path: path, After: saved.Hash, Created: old == nil}
	if old == nil {
		return u
	}
	u.Before = old.Hash
	if back, ok := Revert(saved.Text, hunks); !ok || back != old.Text {
		o := old.Text
		u.Old = &o
	}
	return u
}

// Text is the content u's change started from, given the content it
// left (after, whose hash is u.After) and the hunks it applied; false when
// it cannot be had exactly (the check is the recorded hash).
func (u Undo) Text(after string, hunks []registry.FileDiff) (string, bool) {
	if u.Created {
		return "", false
	}
	if u.Old != nil {
		return *u.Old, Hash(*u.Old) == u.Before
	}
	back, ok := Revert(after, hunks)
	return back, ok && Hash(back) == u.Before
}

// Revert undoes hunks (as Compute and FromEdits make them: in file order,
// whole lines, normalized) on after, the text they produced: each hunk's
// new side, found at a line start after the previous one, becomes its old
// side. The result keeps after's line endings (CRLF when after has them)
// and byte order mark. ok is false when a hunk is not found.
func Revert(after string, hunks []registry.FileDiff) (string, bool) {
	n := normalize(after)
	crlf := len(n) != len(strings.TrimPrefix(after, bom))
	var b strings.Builder
	pos := 0
	for _, h := range hunks {
		at := lineIndex(n, pos, h.NewText)
		if at < 0 {
			return "", false
		}
		b.WriteString(n[pos:at])
		if h.OldText != nil {
			b.WriteString(*h.OldText)
		}
		pos = at + len(h.NewText)
	}
	b.WriteString(n[pos:])
	out := b.String()
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if strings.HasPrefix(after, bom) {
		out = bom + out
	}
	return out, true
}

// lineIndex is the first index at or after from where s holds sub at the
// start of a line, or -1.
func lineIndex(s string, from int, sub string) int {
	for i := from; i <= len(s); {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return -1
		}
		at := i + j
		if at == 0 || s[at-1] == '\n' {
			return at
		}
		i = at + 1
	}
	return -1
}
