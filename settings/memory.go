package settings

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/acp-bridge/acp-bridge/internal/atomicfile"
	"github.com/acp-bridge/acp-bridge/rules"
)

// Memory is what the bridge keeps for the user about one project, in the
// user's config directory (never in the repository): the rules "always"
// answers made, and the fingerprint of the project settings the user
// trusted.
type Memory struct {
	Project string   `json:"project"`
	Allow   []string `json:"allow,omitempty"`
	Deny    []string `json:"deny,omitempty"`
	// Outside are rules (in allow rules' form) for commands that run
	// outside the sandbox: the "always" answer to a sandbox refusal
	// (agent/sandbox.go). They allow nothing that would be asked.
	Outside []string `json:"outside,omitempty"`
	Trusted string   `json:"trusted,omitempty"` // Project.Fingerprint accepted
}

// Store keeps Memory files, one per project, under Dir/projects.
type Store struct {
	Dir string
	mu  sync.Mutex // one read-modify-write at a time in this process
}

// Path is the memory file of the project at root.
func (s *Store) Path(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return filepath.Join(s.Dir, "projects", hex.EncodeToString(sum[:8])+".json")
}

// Load reads the memory of root; none yet is an empty Memory.
func (s *Store) Load(root string) (Memory, error) {
	m := Memory{Project: filepath.Clean(root)}
	b, err := os.ReadFile(s.Path(root))
	if errors.Is(err, iofs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Memory{Project: filepath.Clean(root)}, fmt.Errorf("%s: %v", s.Path(root), err)
	}
	return m, nil
}

// Rules compiles the remembered rules; a rule that no longer parses is
// skipped and reported.
func (m Memory) Rules(path string) (rules.Set, []error) {
	out, errs := m.compile(rules.Deny, m.Deny, path)
	allow, more := m.compile(rules.Allow, m.Allow, path)
	return append(out, allow...), append(errs, more...)
}

// OutsideRules compiles the rules of the commands that run outside the
// sandbox, as allow rules: a command runs outside when one covers it as
// an allow rule would (every command of a line).
func (m Memory) OutsideRules(path string) (rules.Set, []error) {
	return m.compile(rules.Allow, m.Outside, path)
}

func (m Memory) compile(e rules.Effect, texts []string, path string) (rules.Set, []error) {
	var out rules.Set
	var errs []error
	src := rules.Source{Kind: "remembered", Path: path}
	for _, text := range texts {
		r, err := rules.Parse(e, text, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.Root = m.Project
		out = append(out, r)
	}
	return out, errs
}

// Remember adds a rule for root (once).
func (s *Store) Remember(root string, e rules.Effect, text string) error {
	return s.update(root, func(m *Memory) {
		if e == rules.Deny {
			m.Deny = addOnce(m.Deny, text)
		} else {
			m.Allow = addOnce(m.Allow, text)
		}
	})
}

// RememberOutside adds a rule of commands that run outside the sandbox
// for root (once).
func (s *Store) RememberOutside(root, text string) error {
	return s.update(root, func(m *Memory) { m.Outside = addOnce(m.Outside, text) })
}

func addOnce(l []string, text string) []string {
	if slices.Contains(l, text) {
		return l
	}
	return append(l, text)
}

// Forget removes a remembered allow or deny rule; found is false when root
// has none by that text.
func (s *Store) Forget(root string, text string) (found bool, err error) {
	return s.forget(root, text, func(m *Memory) []*[]string { return []*[]string{&m.Allow, &m.Deny} })
}

// ForgetOutside removes a rule of commands that run outside the sandbox.
func (s *Store) ForgetOutside(root string, text string) (found bool, err error) {
	return s.forget(root, text, func(m *Memory) []*[]string { return []*[]string{&m.Outside} })
}

func (s *Store) forget(root, text string, lists func(*Memory) []*[]string) (found bool, err error) {
	err = s.update(root, func(m *Memory) {
		for _, l := range lists(m) {
			if i := slices.Index(*l, text); i >= 0 {
				*l = slices.Delete(*l, i, i+1)
				found = true
			}
		}
	})
	return found, err
}

// Trust records that the user accepted the project settings with this
// fingerprint.
func (s *Store) Trust(root, fingerprint string) error {
	return s.update(root, func(m *Memory) { m.Trusted = fingerprint })
}

// update changes root's memory under a lock, so another bridge process
// working on the same project loses nothing, and replaces the file
// atomically.
func (s *Store) update(root string, f func(*Memory)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.Path(root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	unlock, err := lock(path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.Load(root)
	if err != nil {
		return err
	}
	f(&m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}
