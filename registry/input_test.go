package registry

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strictArgs passes the schema but refuses a value in its decode, as a
// custom UnmarshalJSON can.
type strictArgs struct {
	Path string `json:"path"`
}

func (a *strictArgs) UnmarshalJSON(b []byte) error {
	type plain strictArgs
	if err := json.Unmarshal(b, (*plain)(a)); err != nil {
		return err
	}
	if a.Path == "refused" {
		return errors.New("path refused")
	}
	return nil
}

// TestInput: one decode serves every reader of a call; arguments that fail
// the schema or the decode are INVALID_ARGS for the pipeline and no view
// for the presenters; the permission check runs once per call, and a
// panicking one asks.
func TestInput(t *testing.T) {
	perms := 0
	d, err := Define(Tool[strictArgs, string]{Name: "t",
		Run:             func(_ context.Context, _ *Call, in strictArgs) (string, error) { return in.Path, nil },
		ConcurrencySafe: func(strictArgs) bool { return true },
		PresentCall:     func(in strictArgs) View { return GenericCard{Title: in.Path} },
		Permission: func(_ *Call, in strictArgs) *Permission {
			perms++
			if in.Path == "panic" {
				panic("boom")
			}
			return &Permission{Key: "t:" + in.Path}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, code, key string
		view                  View
	}{
		{"valid", `{"path":"a"}`, "", "t:a", GenericCard{Title: "a"}},
		{"fails the schema", `{"path":1}`, CodeInvalidArgs, "", nil},
		{"fails the decode", `{"path":"refused"}`, CodeInvalidArgs, "", nil},
		{"a panicking permission check asks", `{"path":"panic"}`, "", "", GenericCard{Title: "panic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perms = 0
			c := &Call{ID: "1", Name: "t", Args: json.RawMessage(tt.args)}
			var e *Error
			if err := d.Input(c).Err(); tt.code == "" && err != nil || tt.code != "" && (!errors.As(err, &e) || e.Code != tt.code) {
				t.Errorf("Err = %v, want code %q", err, tt.code)
			}
			if got := d.Input(c).PresentCall(); cmp.Diff(got, tt.view) != "" {
				t.Errorf("PresentCall = %#v, want %#v", got, tt.view)
			}
			if d.ConcurrencySafe(c) != (tt.code == "") {
				t.Errorf("ConcurrencySafe = %v for code %q", !(tt.code == ""), tt.code)
			}
			p1, p2 := d.Permission(c), d.Permission(c)
			if p1 != p2 {
				t.Error("the permission was computed twice")
			}
			if tt.code != "" {
				if p1 != nil || perms != 0 {
					t.Errorf("invalid arguments: permission %+v after %d checks", p1, perms)
				}
			} else if perms != 1 || p1 == nil || p1.Key != tt.key || tt.key == "" && p1.Reason == "" {
				t.Errorf("permission %+v after %d checks, want key %q", p1, perms, tt.key)
			}
			r, err := d.Run(t.Context(), c)
			if err != nil || r.IsError != (tt.code != "") || r.IsError && r.Code != tt.code {
				t.Errorf("Run = %+v, %v", r, err)
			}
		})
	}
	var nilDef *Def
	if in := nilDef.Decode(nil); in != nil || in.PresentCall() != nil || in.ConcurrencySafe() || in.Err() == nil {
		t.Error("a nil tool's Input is not nil and inert")
	}
}
