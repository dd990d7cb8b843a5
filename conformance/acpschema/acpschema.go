// Package acpschema validates ACP JSON-RPC traffic against the official
// schema (schema.json of the ACP release). It reads the schema at run time:
// the project does not copy it. Find locates it.
package acpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Find returns the path of the ACP schema: ../shared/acp/schema.json next to
// the module root when it exists (the project's pinned copy), else the copy
// inside the github.com/coder/acp-go-sdk module (a test dependency).
func Find() (string, error) {
	if p := os.Getenv("ACP_SCHEMA"); p != "" {
		return p, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				p := filepath.Join(d, "..", "shared", "acp", "schema.json")
				if _, err := os.Stat(p); err == nil {
					return p, nil
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coder/acp-go-sdk").Output()
	if err != nil {
		return "", fmt.Errorf("acpschema: no ../shared/acp/schema.json and no acp-go-sdk module: %w", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "schema", "schema.json")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("acpschema: %w", err)
	}
	return p, nil
}

// Schema is a compiled ACP schema with its method table.
type Schema struct {
	c       *jsonschema.Compiler
	url     string
	mu      sync.Mutex
	defs    map[string]*jsonschema.Schema
	methods map[string]Method // by method name
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

// Default loads the schema Find locates, once per process.
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

// Load reads and compiles a schema file.
func Load(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("acpschema: %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	url := "file:///acp/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s := &Schema{c: c, url: url, defs: map[string]*jsonschema.Schema{}, methods: map[string]Method{}}
	var raw struct {
		Defs map[string]struct {
			Side   string `json:"x-side"`
			Method string `json:"x-method"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	for name, d := range raw.Defs {
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

// Method returns the schema types of a method.
func (s *Schema) Method(name string) (Method, bool) {
	m, ok := s.methods[name]
	return m, ok
}

// Validate checks a JSON value against a $defs type.
func (s *Schema) Validate(def string, value []byte) error {
	sch, err := s.def(def)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
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
	s       *Schema
	mu      sync.Mutex
	pending map[string]string // direction of the request + id -> method
}

// NewChecker returns a checker over s.
func NewChecker(s *Schema) *Checker { return &Checker{s: s, pending: map[string]string{}} }

// ErrNotJSONRPC marks a line that is not a JSON-RPC 2.0 message at all.
var ErrNotJSONRPC = errors.New("not a JSON-RPC 2.0 message")

// Check validates one line travelling in direction dir.
func (c *Checker) Check(dir Direction, line []byte) error {
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
		if !ok {
			if strings.HasPrefix(name, "_") {
				return nil // extension methods are free-form
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
		return c.s.Validate(meth.Result, m.Result)
	}
	return fmt.Errorf("%w: neither a request nor a response", ErrNotJSONRPC)
}
