package model

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func collect(t *testing.T, s *Script) ([]Event, error) {
	t.Helper()
	var evs []Event
	for ev, err := range s.Stream(context.Background(), &Request{}) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestScriptReplaysResponsesInOrder(t *testing.T) {
	s, err := ParseScript([]byte(`{"responses":[
		{"parts":[{"thought":"a b"},{"text":"hello world"},{"tool_call":{"name":"read","arguments":{"file_path":"x"}}}],"usage":{"inputTokens":3,"outputTokens":4}},
		{"parts":[{"text":"héllo"}],"chunk_size":2,"finish":"length"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		switch e.Kind {
		case EventText:
			got = append(got, "text:"+e.Text)
		case EventThought:
			got = append(got, "thought:"+e.Text)
		case EventToolCall:
			got = append(got, "call:"+e.ToolCall.ID+":"+e.ToolCall.Name+":"+string(e.ToolCall.Arguments))
		case EventUsage:
			got = append(got, "usage")
		case EventFinish:
			got = append(got, "finish:"+string(e.Finish))
		}
	}
	want := `thought:a |thought:b|text:hello |text:world|call:call_1:read:{"file_path":"x"}|usage|finish:tool_calls`
	if strings.Join(got, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
	evs, _ = collect(t, s)
	var text []string
	for _, e := range evs {
		if e.Kind == EventText {
			text = append(text, e.Text)
		}
	}
	// Chunks of 2 bytes never split the two-byte é.
	if strings.Join(text, "|") != "hé|ll|o" || evs[len(evs)-1].Finish != FinishLength {
		t.Errorf("chunks %q, finish %q", text, evs[len(evs)-1].Finish)
	}
	if _, err := collect(t, s); !errors.Is(err, ErrScriptExhausted) {
		t.Errorf("after the last response: %v", err)
	}
}

func TestScriptErrorsAndCancellation(t *testing.T) {
	s, _ := ParseScript([]byte(`{"responses":[{"parts":[{"text":"x"},{"error":"boom"}]},{"parts":[{"delay_ms":60000}]}]}`))
	if _, err := collect(t, s); err == nil || err.Error() != "boom" {
		t.Errorf("scripted error: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	for _, err := range s.Stream(ctx, &Request{}) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled delay: %v", err)
		}
	}
}

func TestParseScriptRejectsBadScripts(t *testing.T) {
	for _, bad := range []string{
		`{"responses":[{"parts":[{}]}]}`,
		`{"responses":[{"parts":[{"text":"a","thought":"b"}]}]}`,
		`{"responses":[{"parts":[{"tool_call":{"arguments":{}}}]}]}`,
		`{"responses":[{"parts":[{"txt":"typo"}]}]}`,
		`not json`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
