// Package route decides where each provider's model requests go: to the
// endpoint the configuration names, or to the one an editor set with ACP's
// providers/set (unstable), with the headers it gave (its key among them).
// The catalog's models ask the table at every request, so a change reaches
// the next request of every session and nothing else has to know.
//
// What an editor sets lives in this process only: the editor owns the key
// and sends it again when it starts the bridge again (it calls
// providers/set after each initialize). The table never writes it
// anywhere, and nothing here logs a header.
package route

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/acp-bridge/acp-bridge/model"
)

// OpenAI is the one API type the bridge speaks: chat completions.
const OpenAI = "openai"

// Route is where one provider's requests go.
type Route struct {
	APIType string
	BaseURL string
	// Headers replace the configured key (secrets: never logged or stored).
	Headers map[string]string
}

// Info is one provider as providers/list shows it: never its headers.
type Info struct {
	ID        string
	Supported []string
	Required  bool
	// Disabled: no current route. Otherwise APIType and BaseURL are it.
	Disabled bool
	APIType  string
	BaseURL  string
}

// Maker builds the provider of one model at a route a client set.
type Maker func(modelName string, r Route) (model.Provider, error)

// Lister asks a route for its models (GET /models); nil lists nothing.
type Lister func(ctx context.Context, r Route) ([]string, error)

// Table is every configurable provider's route. Its methods are safe for
// concurrent use.
type Table struct {
	list Lister

	mu    sync.Mutex
	order []string
	p     map[string]*entry
}

type entry struct {
	configured string // the configured base URL
	required   bool
	set        *Route   // what a client set; nil: the configured route
	disabled   bool     // a client disabled it
	listed     []string // models the set route listed
	gen        uint64   // changes at each set and disable
	made       map[string]model.Provider
}

// New returns an empty table; list, when set, is asked for a set route's
// models (the picker offers them).
func New(list Lister) *Table { return &Table{list: list, p: map[string]*entry{}} }

// Add registers a configured provider. A required one (the default model's)
// cannot be disabled: new sessions start on it.
func (t *Table) Add(id, baseURL string, required bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.p[id]; ok {
		e.required = e.required || required
		return
	}
	t.order = append(t.order, id)
	t.p[id] = &entry{configured: baseURL, required: required}
}

// Len is the number of providers.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.order)
}

// List is every provider, in the order added.
func (t *Table) List() []Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Info, 0, len(t.order))
	for _, id := range t.order {
		e := t.p[id]
		in := Info{ID: id, Supported: []string{OpenAI}, Required: e.required, Disabled: e.disabled, APIType: OpenAI, BaseURL: e.configured}
		if e.set != nil {
			in.APIType, in.BaseURL = e.set.APIType, e.set.BaseURL
		}
		if in.Disabled {
			in.APIType, in.BaseURL = "", ""
		}
		out = append(out, in)
	}
	return out
}

// Set replaces provider id's route, then asks it for its models. A
// refused set changes nothing.
func (t *Table) Set(ctx context.Context, id string, r Route) error {
	if r.APIType != OpenAI {
		return fmt.Errorf("provider %q: apiType %q is not supported (this agent speaks %q: OpenAI-compatible chat completions)", id, r.APIType, OpenAI)
	}
	if err := checkURL(r.BaseURL); err != nil {
		return fmt.Errorf("provider %q: %w", id, err)
	}
	r.Headers = cloneHeaders(r.Headers)
	if err := t.known(id); err != nil {
		return err
	}
	var listed []string
	if t.list != nil {
		// A gateway without /models is still a route; its configured
		// models are what the picker offers then.
		listed, _ = t.list(ctx, r)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.p[id]
	e.set, e.disabled, e.listed = &r, false, listed
	e.gen++
	e.made = nil
	return nil
}

// Disable takes provider id out of use: its models' requests fail until a
// client sets it again.
func (t *Table) Disable(id string) error {
	if err := t.known(id); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.p[id]
	if e.required {
		return fmt.Errorf("provider %q is required (new sessions start on its model) and cannot be disabled; set another route for it with providers/set", id)
	}
	e.set, e.disabled, e.listed = nil, true, nil
	e.gen++
	e.made = nil
	return nil
}

func (t *Table) known(id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.p[id]; !ok {
		return fmt.Errorf("unknown provider %q (this agent has %s)", id, strings.Join(t.order, ", "))
	}
	return nil
}

// Listed is the models each client-set route listed, by provider, and a
// generation that changes whenever a set or disable changes them.
func (t *Table) Listed() (map[string][]string, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string][]string{}
	var gen uint64
	for _, id := range t.order {
		e := t.p[id]
		gen += e.gen
		if len(e.listed) > 0 {
			out[id] = slices.Clone(e.listed)
		}
	}
	return out, gen
}

// Provider is model modelName of provider id: configured while no client
// set a route for id, else made by mk for the set route (once per set).
func (t *Table) Provider(id, modelName string, configured model.Provider, mk Maker) model.Provider {
	return &routed{t: t, id: id, name: modelName, configured: configured, mk: mk}
}

// current is the provider a request of (id, name) goes to now.
func (t *Table) current(r *routed) (model.Provider, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.p[r.id]
	switch {
	case !ok || (e.set == nil && !e.disabled):
		return r.configured, nil
	case e.disabled:
		return nil, &model.Error{Kind: model.ErrInvalidRequest,
			Msg:  fmt.Sprintf("provider %q was disabled by the editor (providers/disable)", r.id),
			Hint: "Pick a model of another provider, or set this provider again in the editor"}
	}
	if p := e.made[r.name]; p != nil {
		return p, nil
	}
	if r.mk == nil {
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Msg: fmt.Sprintf("provider %q cannot be routed elsewhere", r.id)}
	}
	p, err := r.mk(r.name, *e.set)
	if err != nil {
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Msg: fmt.Sprintf("provider %q: %v", r.id, err), Err: err}
	}
	if e.made == nil {
		e.made = map[string]model.Provider{}
	}
	e.made[r.name] = p
	return p, nil
}

// routed is one model of one provider, asking the table at each request.
type routed struct {
	t          *Table
	id, name   string
	configured model.Provider
	mk         Maker
}

// Unwrap is the configured provider, which requests go to while no
// client routed this provider elsewhere.
func (r *routed) Unwrap() model.Provider { return r.configured }

func (r *routed) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	p, err := r.t.current(r)
	if err != nil {
		return func(yield func(model.Event, error) bool) { yield(model.Event{}, err) }
	}
	return p.Stream(ctx, req)
}

// checkURL accepts an http(s) base URL with a host and no credentials in
// it: a key belongs in the headers, which are never shown or logged, and
// the base URL is (providers/list, errors, the picker).
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("baseUrl must be an http(s) URL with a host")
	case u.User != nil:
		return errors.New("baseUrl must not carry credentials (user:password@); send the key in headers")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("baseUrl must not have a query or fragment; send a key in headers")
	}
	return nil
}

func cloneHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = v
	}
	return out
}
