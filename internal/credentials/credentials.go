// Package credentials keeps the API keys a user stored with `acp-bridge
// login`: one JSON file, readable by the user alone (0600, in a 0700
// directory), under the XDG config directory. Keys in the environment win
// over it; the bridge reads it at start, so the next process uses a key
// stored while one runs. Keys never go to a log: callers get them only to
// put them in a request header.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Store is the key file at Path.
type Store struct{ Path string }

// file is the stored form: keys by normalized base URL.
type file struct {
	Keys map[string]string `json:"keys"`
}

// Default is the user's store: $XDG_CONFIG_HOME/acp-bridge/credentials.json,
// ~/.config when XDG_CONFIG_HOME is unset (on every system, next to the
// config file).
func Default() Store {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return Store{}
		}
		dir = filepath.Join(home, ".config")
	}
	return Store{Path: filepath.Join(dir, "acp-bridge", "credentials.json")}
}

// Normalize is the form a base URL is stored under: scheme and host in
// lower case, no trailing slash.
func Normalize(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return strings.TrimRight(strings.TrimSpace(baseURL), "/")
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// Load reads every stored key, by normalized base URL. No file is no keys.
func (s Store) Load() (map[string]string, error) {
	if s.Path == "" {
		return map[string]string{}, nil
	}
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		// Never quote the content: it holds keys.
		return nil, fmt.Errorf("%s is not a credentials file (%s); remove it with acp-bridge logout", s.Path, syntaxOnly(err))
	}
	if f.Keys == nil {
		f.Keys = map[string]string{}
	}
	return f.Keys, nil
}

// syntaxOnly describes a JSON error without the text it failed on.
func syntaxOnly(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("bad JSON at byte %d", se.Offset)
	}
	return "unexpected JSON"
}

// Key is the stored key for baseURL, "" when there is none.
func (s Store) Key(baseURL string) (string, error) {
	keys, err := s.Load()
	if err != nil {
		return "", err
	}
	return keys[Normalize(baseURL)], nil
}

// Save stores key for baseURL, keeping the others. The file is replaced
// atomically and is never, even for an instant, readable by others.
func (s Store) Save(baseURL, key string) error {
	if s.Path == "" {
		return errors.New("no config directory to store the key in (set XDG_CONFIG_HOME or HOME)")
	}
	keys, err := s.Load()
	if err != nil {
		return err
	}
	keys[Normalize(baseURL)] = key
	b, err := json.MarshalIndent(file{Keys: keys}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".credentials-*") // created 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.Path)
}

// Remove deletes every stored key; ok is false when there was none.
func (s Store) Remove() (ok bool, err error) {
	if s.Path == "" {
		return false, nil
	}
	err = os.Remove(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
