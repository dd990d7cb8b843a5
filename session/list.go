package session

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Info sums up one stored session for a session list.
type Info struct {
	ID                    string
	Cwd                   string
	AdditionalDirectories []string
	Title                 string    // from the first prompt; "" when there is none
	Created               time.Time // from the header
	Updated               time.Time // time of the last event (Created when there is none)
	Events                int
	Prompts               int  // user messages: none means the chat was opened and never used
	Archived              bool // the last session/archive event archived it
}

// List sums up every stored session that was used (a prompt, or a title
// given), most recently updated first. A session opened and never prompted
// (a client may open one per chat window) is left out, so the picker is not
// filled with bare untitled ids; it is still stored and loads. A log that cannot be read is left out and logged,
// never fatal: one bad file must not hide the others. Summaries are cached
// per file while its size and modification time stay the same, so listing
// again reads only the logs that changed.
func (st *Store) List() ([]Info, error) {
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		return nil, err
	}
	var out []Info
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jsonl") || !ValidID(strings.TrimSuffix(name, ".jsonl")) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		seen[name] = true
		info, err := st.summary(name, fi)
		if err != nil {
			continue
		}
		if info.Prompts > 0 || info.Title != "" {
			out = append(out, info)
		}
	}
	st.mu.Lock()
	for name := range st.infos {
		if !seen[name] {
			delete(st.infos, name)
		}
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (st *Store) summary(name string, fi os.FileInfo) (Info, error) {
	st.mu.Lock()
	c, ok := st.infos[name]
	st.mu.Unlock()
	if ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return c.info, c.err
	}
	p := filepath.Join(st.dir, name)
	h, evs, _, _, err := readFileOf(p, func(typ string) bool { return typ == TypeTitle || typ == TypeUserMessage || typ == TypeArchive })
	if err == nil && h.ID+".jsonl" != name {
		// A log copied or renamed: session/load of its id opens the
		// file named after it, not this one, and listing both would show
		// the id twice.
		err = &CorruptError{Path: p, Line: 1, Reason: fmt.Sprintf("the header names session %s, but the file is not %s.jsonl", h.ID, h.ID)}
	}
	var info Info
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return info, err // removed while listing: nothing to cache
		}
		st.log.Warn("leaving an unreadable session log out of the list", "path", p, "err", err)
	} else {
		info = Summarize(h, evs)
	}
	st.mu.Lock()
	st.infos[name] = cachedInfo{size: fi.Size(), mtime: fi.ModTime(), info: info, err: err}
	st.mu.Unlock()
	return info, err
}

// Summarize sums up a session from its header and events.
func Summarize(h Header, evs []Event) Info {
	info := Info{ID: h.ID, Cwd: h.Cwd, AdditionalDirectories: h.AdditionalDirectories,
		Created: h.Created, Updated: h.Created, Events: len(evs)}
	// Archiving is not an update of the conversation: the session keeps
	// its place in the list order.
	for i := len(evs) - 1; i >= 0; i-- {
		if _, ok := evs[i].Payload.(Archive); ok {
			continue
		}
		info.Updated = evs[i].Time
		break
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if a, ok := evs[i].Payload.(Archive); ok {
			info.Archived = a.Archived
			break
		}
	}
	// The session's own title (the last one given: by TitleFrom, or session/set_title)
	// wins; until it has one, its first prompt names it by the same rule.
	for i := len(evs) - 1; i >= 0 && info.Title == ""; i-- {
		if t, ok := evs[i].Payload.(Title); ok {
			info.Title = t.Title
		}
	}
	for _, ev := range evs {
		if m, ok := ev.Payload.(UserMessage); ok {
			info.Prompts++
			if info.Title == "" {
				info.Title = TitleFrom(m.Text)
			}
		}
	}
	return info
}
