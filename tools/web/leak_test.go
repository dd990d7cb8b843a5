package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestFetchLeavesNoConnection: each fetch makes its own transport
// (netguard.Guard), whose connections must all be closed when the call
// ends, however it ended: checked while the server still runs, so a
// connection left open shows as the goroutines on both its ends.
func TestFetchLeavesNoConnection(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, strings.Repeat("z", fetchMaxBody+1<<20))
		case "/404":
			http.NotFound(w, r)
		case "/moved":
			http.Redirect(w, r, "/", http.StatusFound)
		case "/away":
			http.Redirect(w, r, "https://example.com/", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	})
	before := goleak.IgnoreCurrent()
	defer func() {
		// A bound that tells "never" from "late" on a busy machine: Find
		// itself waits a second or two, and is asked again for 30 s.
		for deadline := time.Now().Add(30 * time.Second); ; {
			err := goleak.Find(before)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("a fetch left a connection open: %v", err)
				return
			}
		}
	}()
	c := ruleCall(t, allowLocal)
	for _, p := range []string{"/", "/big", "/404", "/moved", "/away"} {
		run(t, noProxy, c, fetchArgs{URL: s.URL + p})
	}
}
