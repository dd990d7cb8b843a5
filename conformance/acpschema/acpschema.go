// Package acpschema validates ACP JSON-RPC traffic against the official
// schema (schema.json of an ACP release, and schema.unstable.json, its
// unstable set, when it lies beside it). It reads the schema at run time:
// the project does not copy it. Locate finds it.
package acpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DirEnv names the variable that points at a directory holding schema.json
// (and schema.unstable.json): the newest schema release to check against.
const DirEnv = "ACP_SCHEMA_DIR"

// sibling is where a checkout's newer schema lies, relative to the module
// root, when the project's workspace provides one.
var sibling = filepath.Join("..", "shared", "acp")

// Locate returns the directory of the schema to check against: Newer's
// when there is one, else ModuleDir's.
func Locate() (string, error) {
	d, err := Newer()
	if d != "" || err != nil {
		return d, err
	}
	return ModuleDir()
}

// Newer returns $ACP_SCHEMA_DIR, else the newer schema beside the checkout
// when there is one, else "".
func Newer() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		if _, err := os.Stat(filepath.Join(d, "schema.json")); err != nil {
			return "", fmt.Errorf("acpschema: %s: %w", DirEnv, err)
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, sibling)
			if _, err := os.Stat(filepath.Join(p, "schema.json")); err == nil {
				return p, nil
			}
			return "", nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// ModuleDir returns the schema directory inside the github.com/coder/acp-go-sdk
// module, which the module graph always provides: an older release (see
// Schema.Lacks).
func ModuleDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coder/acp-go-sdk").Output()
	if err != nil {
		return "", fmt.Errorf("acpschema: no %s, no newer schema beside the checkout, and no acp-go-sdk module: %w", DirEnv, err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "schema")
	if _, err := os.Stat(filepath.Join(p, "schema.json")); err != nil {
		return "", fmt.Errorf("acpschema: %w", err)
	}
	return p, nil
}

// Find returns the path of the stable schema.json Locate finds.
func Find() (string, error) {
	d, err := Locate()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "schema.json"), nil
}

// Schema is a compiled ACP schema with its method table, and the unstable
// schema of the same release when it was found beside it.
type Schema struct {
	// Path is the file it was read from.
	Path string
	// Unstable is schema.unstable.json of the same release, or nil.
	Unstable *Schema

	c       *jsonschema.Compiler
	url     string
	mu      sync.Mutex
	defs    map[string]*jsonschema.Schema
	methods map[string]Method // by method name
	updates map[string]bool   // sessionUpdate discriminators
	names   map[string]bool   // $defs names

	olderOnce sync.Once
	olderIn   []*olderDef // see older
}

// Method names the schema types of one method.
type Method struct {
	Name         string
	Side         string // "agent": the client calls it; "client": the agent calls it
	Params       string // $defs name of the params
	Result       string // $defs name of the result ("" for notifications)
	Notification bool
}

var (
	loadOnce sync.Once
	loaded   *Schema
	loadErr  error
)

// Default loads the schema Locate finds, once per process, with its
// unstable companion when there is one.
func Default() (*Schema, error) {
	loadOnce.Do(func() {
		p, err := Find()
		if err != nil {
			loadErr = err
			return
		}
		loaded, loadErr = Load(p)
	})
	return loaded, loadErr
}

// Load reads and compiles a schema file, and schema.unstable.json beside
// it as its Unstable companion when that exists.
func Load(path string) (*Schema, error) {
	s, err := load(path)
	if err != nil {
		return nil, err
	}
	up := filepath.Join(filepath.Dir(path), "schema.unstable.json")
	if filepath.Base(path) != "schema.unstable.json" {
		if _, err := os.Stat(up); err == nil {
			if s.Unstable, err = load(up); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func load(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("acpschema: %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	url := "file:///acp/" + filepath.Base(path)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s := &Schema{Path: path, c: c, url: url, defs: map[string]*jsonschema.Schema{},
		methods: map[string]Method{}, updates: map[string]bool{}, names: map[string]bool{}}
	var raw struct {
		Defs map[string]struct {
			Side   string `json:"x-side"`
			Method string `json:"x-method"`
			OneOf  []struct {
				Properties struct {
					SessionUpdate struct {
						Const string `json:"const"`
					} `json:"sessionUpdate"`
				} `json:"properties"`
			} `json:"oneOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	for name, d := range raw.Defs {
		s.names[name] = true
		if name == "SessionUpdate" {
			for _, v := range d.OneOf {
				if k := v.Properties.SessionUpdate.Const; k != "" {
					s.updates[k] = true
				}
			}
		}
		if d.Method == "" {
			continue
		}
		m := s.methods[d.Method]
		m.Name = d.Method
		switch {
		case strings.HasSuffix(name, "Request"):
			m.Params, m.Side = name, d.Side
		case strings.HasSuffix(name, "Response"):
			m.Result = name
		case strings.HasSuffix(name, "Notification"):
			m.Params, m.Side, m.Notification = name, d.Side, true
		}
		s.methods[d.Method] = m
	}
	return s, nil
}

// Has reports whether the stable schema defines a $defs type.
func (s *Schema) Has(def string) bool { return s.names[def] }

// HasUpdate reports whether the stable schema has a session/update variant.
func (s *Schema) HasUpdate(kind string) bool { return s.updates[kind] }

// newer are the session/update variants of releases after 1.21 that an
// older schema (acp-go-sdk's, the one the module graph provides) cannot
// express; a check against such a schema skips them rather than fail.
var newer = []string{"usage_update", "notice", "compaction_update", "compaction_summary_chunk"}

// newerMethods are methods of releases after 1.21 that the older schema
// lacks (session/delete became stable in 1.22).
var newerMethods = []string{"session/delete", "session/set_title", "session/status", "session/archive",
	"session/unarchive", "auth/status", "auth/status_update", "providers/list", "providers/set", "providers/disable"}

// ErrNotInSchema marks a message that uses a variant newer than the schema
// it was checked against: it was not checked, and is not known to be wrong.
var ErrNotInSchema = errors.New("newer than the schema")

// Lacks reports whether a session/update variant of a later release is in
// neither this schema nor its unstable companion.
func (s *Schema) Lacks(kind string) bool {
	return slices.Contains(newer, kind) && !s.updates[kind] && (s.Unstable == nil || !s.Unstable.updates[kind])
}

// Method returns the schema types of a method: the stable schema's, else
// the unstable companion's.
func (s *Schema) Method(name string) (Method, bool) {
	if m, ok := s.methods[name]; ok {
		return m, true
	}
	if s.Unstable != nil {
		return s.Unstable.Method(name)
	}
	return Method{}, false
}

// Validate checks a JSON value against a $defs type: against the stable
// schema, and against the unstable one too where it defines the type (the
// stable schema lets unknown fields through, so an unstable field such as
// PromptResponse.usage is checked only there). A type or session/update
// variant only the unstable schema has is checked there alone. A variant
// of a later release that neither has gives ErrNotInSchema.
func (s *Schema) Validate(def string, value []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	for _, o := range s.older() {
		if o.narrow == nil {
			continue
		}
		if err := o.narrow(v); err != nil {
			return fmt.Errorf("%s: %w", def, err)
		}
	}
	u := s.Unstable
	if kind := updateKind(def, v); kind != "" && !s.updates[kind] {
		switch {
		case u != nil && u.updates[kind]:
			return u.validate(def, v)
		case s.Lacks(kind):
			return fmt.Errorf("%w: %s is not in %s", ErrNotInSchema, kind, s.Path)
		}
	}
	if !s.names[def] && u != nil && u.names[def] {
		return u.validate(def, v)
	}
	if err := s.validate(def, v); err != nil {
		return err
	}
	if u != nil && u.names[def] {
		if err := u.validate(def, v); err != nil {
			return fmt.Errorf("unstable schema: %w", err)
		}
	}
	return nil
}

// updateKind is the sessionUpdate discriminator of a SessionNotification
// or SessionUpdate value, or "".
func updateKind(def string, v any) string {
	m, _ := v.(map[string]any)
	if def == "SessionNotification" {
		m, _ = m["update"].(map[string]any)
	} else if def != "SessionUpdate" {
		return ""
	}
	k, _ := m["sessionUpdate"].(string)
	return k
}

func (s *Schema) validate(def string, v any) error {
	sch, err := s.def(def)
	if err != nil {
		return err
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	return nil
}

func (s *Schema) def(name string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch := s.defs[name]; sch != nil {
		return sch, nil
	}
	sch, err := s.c.Compile(s.url + "#/$defs/" + name)
	if err != nil {
		return nil, err
	}
	s.defs[name] = sch
	return sch, nil
}

// Direction of a message on the wire.
type Direction int

const (
	ToAgent   Direction = iota // client → agent (stdin)
	FromAgent                  // agent → client (stdout)
)

func (d Direction) String() string {
	if d == ToAgent {
		return "client→agent"
	}
	return "agent→client"
}

// Checker validates a conversation: each message against the type of its
// method, and each response against the result type of the request it answers.
type Checker struct {
	s         *Schema
	mu        sync.Mutex
	pending   map[string]string // direction of the request + id -> method
	unchecked []string
}

// Unchecked lists the messages the schema was too old to check (see
// ErrNotInSchema), with the reason.
func (c *Checker) Unchecked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.unchecked)
}

// Check validates one line travelling in direction dir. A message newer
// than the schema passes and is listed by Unchecked.
func (c *Checker) Check(dir Direction, line []byte) error {
	err := c.check(dir, line)
	if errors.Is(err, ErrNotInSchema) {
		c.mu.Lock()
		c.unchecked = append(c.unchecked, err.Error())
		c.mu.Unlock()
		return nil
	}
	return err
}

// NewChecker returns a checker over s.
func NewChecker(s *Schema) *Checker { return &Checker{s: s, pending: map[string]string{}} }

// ErrNotJSONRPC marks a line that is not a JSON-RPC 2.0 message at all.
var ErrNotJSONRPC = errors.New("not a JSON-RPC 2.0 message")

func (c *Checker) check(dir Direction, line []byte) error {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("%w: %v", ErrNotJSONRPC, err)
	}
	if m.JSONRPC != "2.0" {
		return fmt.Errorf("%w: jsonrpc is %q", ErrNotJSONRPC, m.JSONRPC)
	}
	switch {
	case m.Method != nil:
		name := *m.Method
		if len(m.ID) > 0 {
			c.mu.Lock()
			c.pending[fmt.Sprint(dir)+string(m.ID)] = name
			c.mu.Unlock()
		}
		meth, ok := c.s.Method(name)
		if ok {
			if err := c.s.olderMethod(name); err != nil {
				return err
			}
		}
		if !ok {
			if strings.HasPrefix(name, "_") {
				return nil // extension methods are free-form
			}
			if slices.Contains(newerMethods, name) {
				return fmt.Errorf("%w: method %s is not in %s", ErrNotInSchema, name, c.s.Path)
			}
			return fmt.Errorf("%s: method %q is not in the schema", dir, name)
		}
		wantSide := "agent" // methods the client calls are served by the agent
		if dir == FromAgent {
			wantSide = "client"
		}
		if meth.Side != "" && meth.Side != wantSide && meth.Side != "protocol" {
			return fmt.Errorf("%s: %s is a method the %s serves", dir, name, meth.Side)
		}
		if meth.Notification != (len(m.ID) == 0) {
			if meth.Notification {
				return fmt.Errorf("%s: %s is a notification but carries an id", dir, name)
			}
			return fmt.Errorf("%s: %s is a request but has no id", dir, name)
		}
		params := m.Params
		if len(params) == 0 {
			params = json.RawMessage("null")
		}
		return c.s.Validate(meth.Params, params)
	case len(m.Result) > 0 || len(m.Error) > 0:
		if len(m.ID) == 0 {
			return fmt.Errorf("%s: response without an id", dir)
		}
		reqDir := ToAgent
		if dir == ToAgent {
			reqDir = FromAgent
		}
		c.mu.Lock()
		key := fmt.Sprint(reqDir) + string(m.ID)
		name, known := c.pending[key]
		delete(c.pending, key)
		c.mu.Unlock()
		if len(m.Error) > 0 {
			return c.s.Validate("Error", m.Error)
		}
		if !known {
			return fmt.Errorf("%s: response to id %s, which was never sent", dir, m.ID)
		}
		meth, ok := c.s.Method(name)
		if !ok || meth.Result == "" {
			return nil
		}
		if err := c.s.olderMethod(name); err != nil {
			return err
		}
		return c.s.Validate(meth.Result, m.Result)
	}
	return fmt.Errorf("%w: neither a request nor a response", ErrNotJSONRPC)
}

// olderDef is one thing a schema release (the acp-go-sdk module's, say)
// may define as an earlier draft did: messages that use the later
// definition are newer than that schema, not wrong.
type olderDef struct {
	what string
	// in reports whether s (with its unstable set) has the older definition.
	in func(s *Schema) bool
	// methods: the messages of the methods with this prefix use the
	// definition: with the older one they are not checked (ErrNotInSchema).
	methods string
	// narrow, when set, checks the later definition's part of a value
	// itself and takes it out, so that the older schema checks the rest.
	narrow func(v any) error
}

// olderDefs is every definition a schema may have in an older form.
var olderDefs = []olderDef{
	{
		what:    "ProviderInfo keyed by id, not providerId (the draft before 1.25)",
		in:      func(s *Schema) bool { return s.defLacks("ProviderInfo", "providerId") },
		methods: "providers/",
	},
	{
		what: "select config options only (1.25 added boolean ones, with session.configOptions.boolean)",
		in: func(s *Schema) bool {
			const def = "BooleanConfigOptionCapabilities"
			if s.names["SessionConfigBoolean"] && !s.names[def] {
				return false // the v2 draft: boolean options without a capability
			}
			return !s.names[def] && (s.Unstable == nil || !s.Unstable.names[def])
		},
		narrow: checkBooleanOptions,
	},
}

// older returns the entries of olderDefs whose older form s has, worked
// out once per schema.
func (s *Schema) older() []*olderDef {
	s.olderOnce.Do(func() {
		for i := range olderDefs {
			if olderDefs[i].in(s) {
				s.olderIn = append(s.olderIn, &olderDefs[i])
			}
		}
	})
	return s.olderIn
}

// olderMethod is ErrNotInSchema, with the reason, when method's messages
// use a definition s has in an older form; else nil.
func (s *Schema) olderMethod(method string) error {
	for _, o := range s.older() {
		if o.methods != "" && strings.HasPrefix(method, o.methods) {
			return fmt.Errorf("%w: %s in %s: %s", ErrNotInSchema, method, s.Path, o.what)
		}
	}
	return nil
}

// defLacks reports whether the first of s and its unstable set that
// defines the object type def leaves out property prop.
func (s *Schema) defLacks(def, prop string) bool {
	for _, sch := range []*Schema{s, s.Unstable} {
		if sch == nil || !sch.names[def] {
			continue
		}
		d, err := sch.def(def)
		if err != nil {
			return false
		}
		_, ok := d.Properties[prop]
		return !ok
	}
	return false
}

// checkBooleanOptions takes the boolean entries out of every configOptions
// list in v, checking each against the shape 1.25 gives them (an id, a
// name, type "boolean", a boolean currentValue), so that an older schema,
// which knows only select options, checks the rest. An agent offers them
// only to a client that asked, so they are not wrong, only newer.
func checkBooleanOptions(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if list, ok := e.([]any); ok && k == "configOptions" {
				kept := list[:0:0]
				for i, o := range list {
					m, _ := o.(map[string]any)
					if m["type"] != "boolean" {
						kept = append(kept, o)
						continue
					}
					if err := booleanOptionShape(m); err != nil {
						return fmt.Errorf("at '/configOptions/%d': %w", i, err)
					}
				}
				x[k] = kept
				continue
			}
			if err := checkBooleanOptions(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkBooleanOptions(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func booleanOptionShape(m map[string]any) error {
	for _, k := range []string{"id", "name"} {
		if s, ok := m[k].(string); !ok || s == "" {
			return fmt.Errorf("boolean option: %s must be a non-empty string", k)
		}
	}
	if _, ok := m["currentValue"].(bool); !ok {
		return fmt.Errorf("boolean option: currentValue must be a boolean")
	}
	if _, ok := m["options"]; ok {
		return fmt.Errorf("boolean option: has options")
	}
	return nil
}

// V2 loads the ACP v2 draft's schema (v2/schema.unstable.json, which has
// the stable draft's types and the unstable ones) from the directory Newer
// finds; nil, nil when there is none (a checkout without the workspace's
// schemas: the caller skips what needs it).
func V2() (*Schema, error) {
	d, err := Newer()
	if d == "" || err != nil {
		return nil, err
	}
	p := filepath.Join(d, "v2", "schema.unstable.json")
	if _, err := os.Stat(p); err != nil {
		return nil, nil
	}
	return Load(p)
}
