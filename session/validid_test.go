package session

import (
	"regexp"
	"strings"
	"testing"
)

// ValidID accepts exactly what the id pattern describes.
func TestValidIDMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	ids := []string{"", "a", "0", "-a", ".a", "_a", "a-b.c_d", "a/b", "..", "a b", "a\n", "é", "a\x00",
		strings.Repeat("a", 128), strings.Repeat("a", 129), "sess-2026-12-03T07:00:00Z", "A9.Z"}
	for c := range 256 {
		ids = append(ids, "x"+string(rune(c)), string([]byte{byte(c)})+"x")
	}
	for _, id := range ids {
		if got, want := ValidID(id), re.MatchString(id); got != want {
			t.Errorf("ValidID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}
