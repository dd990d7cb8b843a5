package session

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Who holds a session, without a descriptor per session. A process opens
// hundreds of sessions (one per chat, kept for the connection's life) and
// may have a low descriptor limit (256 is macOS's default), so an idle
// session's log is closed; the lock that keeps two processes from
// appending to one log cannot go with its file.
//
// Instead each Store, once it writes, holds one lock for its life: a
// file <dir>/live/<token> it keeps open and locked (lockFile). The
// <log>.holder record (handover.go) names the token of the store holding
// the log. A record whose token's file is not locked is left from a
// process that is gone (the lock went with it, however it ended), so the
// log is free; a record of a locked token is a live holder, and the log is
// busy. Taking or giving up a log (Create, Open, Delete) locks the log
// itself for that moment only, so two processes never decide at once.

// liveDir is the directory of the stores' lock files, inside the store.
const liveDir = "live"

// liveToken is this store's token, its lock file created and locked on
// first use (a store that only lists and reads needs none, and may be
// read-only).
func (st *Store) liveToken() (string, error) {
	st.liveMu.Lock()
	defer st.liveMu.Unlock()
	if st.live != nil {
		return st.token, nil
	}
	// Mkdir, not MkdirAll: a store directory removed under the bridge is
	// not made again here (the sessions then go on unsaved, and say so).
	dir := filepath.Join(st.dir, liveDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, iofs.ErrExist) {
		return "", err
	}
	st.sweepLive(dir)
	for range 100 {
		tok := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64(), 16)
		p := filepath.Join(dir, tok)
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, iofs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := lockFile(f); err != nil {
			// Another store is looking at it (alive) and will remove it.
			f.Close()
			continue
		}
		// Between creating and locking, another store may have found the
		// file unlocked and removed it: a lock on a removed file says
		// nothing to anyone.
		if fi, err := os.Stat(p); err != nil || !sameFile(f, fi) {
			f.Close()
			continue
		}
		st.live, st.token = f, tok
		return tok, nil
	}
	return "", fmt.Errorf("no lock file could be made in %s", dir)
}

func sameFile(f *os.File, fi os.FileInfo) bool {
	mine, err := f.Stat()
	return err == nil && os.SameFile(mine, fi)
}

// sweepLive removes the lock files of stores that are gone.
func (st *Store) sweepLive(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() && ValidID(e.Name()) {
			probe(filepath.Join(dir, e.Name()))
		}
	}
}

// alive reports whether the store that took token still runs: its lock
// file is locked. A file found unlocked is removed. When it cannot tell
// (the file will not open), it says alive: a session wrongly refused can
// be asked for again, one appended to by two processes is damaged.
func (st *Store) alive(token string) bool {
	if token == "" || !ValidID(token) {
		return false
	}
	st.liveMu.Lock()
	own := st.live != nil && token == st.token
	st.liveMu.Unlock()
	return own || probe(filepath.Join(st.dir, liveDir, token))
}

// probe reports whether the lock file p is locked, and removes it if not.
func probe(p string) bool {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return !errors.Is(err, iofs.ErrNotExist)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return true
	}
	// Removed while locked, so a store that just made it sees its file
	// gone (liveToken). Windows removes no open file: there it goes once
	// closed, when no store that just made it can have it open.
	rerr := os.Remove(p)
	f.Close()
	if rerr != nil {
		os.Remove(p)
	}
	return false
}

// holds reports whether this store has id's log open, and marks it so
// (hold) or not (release): two Opens of one log in one process are as
// wrong as in two.
func (st *Store) holds(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.held[id]
}

func (st *Store) hold(id string, on bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if on {
		st.held[id] = true
	} else {
		delete(st.held, id)
	}
}

// heldElsewhere reports whether the holder record of the log at p names a
// store other than this one that still runs. Called with the log locked.
func (st *Store) heldElsewhere(p, own string) bool {
	h, ok := readHolder(p)
	return ok && h.Token != own && st.alive(h.Token)
}
