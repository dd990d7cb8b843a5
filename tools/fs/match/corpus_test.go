package match_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/tools/fs/match"
	"github.com/acp-bridge/acp-bridge/tools/fs/match/matchtest"
)

// TestCorpus runs every corpus case through the matcher alone. The same
// cases go through the real binary in cmd/acp-bridge (TestEditCorpus).
// Cases the edit tool refuses before matching (FS_INVALID_EDIT) are left
// to those.
func TestCorpus(t *testing.T) {
	cases, err := matchtest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var tally matchtest.Tally
	for _, c := range cases {
		if c.Code == "FS_INVALID_EDIT" {
			continue
		}
		t.Run(c.ID(), func(t *testing.T) {
			r, err := match.FindAt("f.txt", c.File, c.Old, c.New, c.All, c.Line)
			var ref *match.Refusal
			switch {
			case err == nil:
				got := match.Apply(c.File, r.Edits)
				tally.Add(c, true, got, "", "")
				if c.Land && got == c.Want && !strings.Contains(r.Note(), c.Note) {
					t.Errorf("note %q, want it to say %q", r.Note(), c.Note)
				}
				if c.Land && c.Note == "" && r.Tolerant() {
					t.Errorf("an exact case matched tolerantly: %s", r.Note())
				}
			case errors.As(err, &ref):
				tally.Add(c, false, "", ref.Code, ref.Message)
			default:
				t.Fatalf("Find: %v", err)
			}
		})
	}
	for _, f := range tally.Failures {
		t.Error(f)
	}
	t.Logf("corpus (matcher): %s", tally)
}
