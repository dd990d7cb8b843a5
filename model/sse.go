package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// sseReader reads server-sent events: "data:" lines joined until a blank
// line, "event:" naming the event, ":" comments ignored. Servers that omit
// the blank line between events (one JSON object a line) are read too: a
// new data line after a complete JSON object starts a new event.
type sseReader struct {
	r       *bufio.Reader
	pending []byte // a line read ahead, handled first
	last    []byte // the line that was no SSE field
}

type sseEvent struct {
	name string // "" for the default "message"
	data []byte
}

var errNotSSE = errors.New("not an event stream")

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReaderSize(r, 32<<10)} }

// next returns the next event with data. io.EOF: the stream ended cleanly
// (after a complete event); errNotSSE: a line that is no SSE field.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []byte
	have := false
	for {
		var line []byte
		var err error
		if s.pending != nil {
			line, s.pending = s.pending, nil
		} else {
			line, err = s.r.ReadBytes('\n')
		}
		if len(line) == 0 && err != nil {
			if have {
				ev.data = data
				return ev, nil
			}
			return ev, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if have {
				ev.data = data
				return ev, nil
			}
			ev.name = "" // an event without data is dropped, its name with it
		case line[0] == ':':
			// a comment: keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				if have && json.Valid(data) {
					// No blank line after the previous event.
					s.pending = line
					ev.data = data
					return ev, nil
				}
				if have {
					data = append(data, '\n')
				}
				data = append(data, value...)
				have = true
			case "event":
				ev.name = string(value)
			case "id", "retry":
			default:
				if !have && ev.name == "" {
					s.last = append(line, '\n')
					return ev, errNotSSE
				}
			}
		}
		if err != nil {
			if have {
				ev.data = data
				return ev, nil
			}
			return ev, err
		}
	}
}
