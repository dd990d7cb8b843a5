package registry

import (
	"fmt"
	"testing"
	"time"
)

func TestMemo(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &Memo{Now: func() time.Time { return now }}
	m.Put("a", "A", 10, time.Minute)
	if v, ok := m.Get("a"); !ok || v != "A" {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	now = now.Add(time.Minute)
	if _, ok := m.Get("a"); ok {
		t.Error("an entry outlived its time")
	}
	// Bounded in entries: the oldest goes first.
	for i := range MemoMaxEntries + 1 {
		m.Put(fmt.Sprint(i), i, 1, time.Hour)
	}
	if _, ok := m.Get("0"); ok {
		t.Error("the oldest entry was kept past the entry bound")
	}
	if _, ok := m.Get(fmt.Sprint(MemoMaxEntries)); !ok {
		t.Error("the newest entry was not kept")
	}
	// Bounded in bytes.
	m.Put("big", "x", MemoMaxBytes-5, time.Hour)
	if m.size > MemoMaxBytes {
		t.Errorf("memo holds %d bytes, more than %d", m.size, MemoMaxBytes)
	}
	m.Put("huge", "x", MemoMaxBytes+1, time.Hour)
	if _, ok := m.Get("huge"); ok {
		t.Error("a value larger than the memo was kept")
	}
	var none *Memo
	none.Put("a", 1, 1, time.Hour)
	if _, ok := none.Get("a"); ok {
		t.Error("a nil memo remembered")
	}
}
