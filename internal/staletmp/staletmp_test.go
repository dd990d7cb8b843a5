package staletmp

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A build directory an interrupted run left is removed by a later run; a
// fresh one (a run going on beside this one) and other files are kept.
func TestSweep(t *testing.T) {
	tmp := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "acp-bridge"), []byte("binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk("acp-bridge-e2e-111", Age+time.Minute)
	staleStartup := mk("acp-bridge-startup-222", Age+time.Hour)
	fresh := mk("acp-bridge-e2e-333", time.Minute)
	other := mk("someone-elses-e2e-444", 48*time.Hour)
	Sweep(tmp, now, "acp-bridge-e2e-*", "acp-bridge-startup-*")
	for p, want := range map[string]bool{stale: false, staleStartup: false, fresh: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
