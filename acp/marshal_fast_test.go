package acp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The hand-written encodings of text blocks and content items write the
// bytes the general encoding writes.
func TestHandEncodingsMatchGeneral(t *testing.T) {
	texts := []string{"", "plain", "a \"quoted\" \\ back\nslash\ttab", "<html> & more", "\u2028\u2029", "日本語 é",
		"\x00\x1f control", string([]byte{0xff, 0xfe}) + " invalid"}
	for _, text := range texts {
		b := TextBlock(text)
		got, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := b.marshalWire()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("text block %q:\ngot  %s\nwant %s", text, got, want)
		}
		item := ContentItem(b)
		got, err = json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		want, err = json.Marshal(struct {
			Type    string `json:"type"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}{Type: "content", Content: struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", text}})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("content item %q:\ngot  %s\nwant %s", text, got, want)
		}
	}
}

// Message chunks written by hand match encoding/json's bytes.
func TestChunkEncodingMatchesGeneral(t *testing.T) {
	blocks := []ContentBlock{TextBlock("hi <b> & \"q\"\n"), {Type: "image", Data: "AAAA", MimeType: "image/png"},
		{Type: "text", Text: "annotated", Annotations: json.RawMessage(`{ "priority" : 1 }`)}}
	for _, b := range blocks {
		for _, id := range []string{"", "msg-1", "\u2028<id>"} {
			for _, u := range []Update{AgentMessageChunk{Content: b, MessageID: id}, AgentThoughtChunk{Content: b, MessageID: id},
				UserMessageChunk{Content: b, MessageID: id}, AgentMessageChunk{Content: b, MessageID: id, Meta: Meta{"k": "<v>"}}} {
				got, err := marshalUpdate(u)
				if err != nil {
					t.Fatal(err)
				}
				want, err := json.Marshal(u)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("%T %+v:\ngot  %s\nwant %s", u, u, got, want)
				}
			}
		}
	}
}

// marshalUpdate writes message chunks by hand: a field added to
// ContentChunk must be added there too.
func TestChunkEncodingKnowsEveryField(t *testing.T) {
	typ := reflect.TypeOf(ContentChunk{})
	var names []string
	for i := range typ.NumField() {
		names = append(names, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
	}
	if got := strings.Join(names, " "); got != "content messageId _meta" {
		t.Errorf("ContentChunk fields %q: update marshalUpdate", got)
	}
}
