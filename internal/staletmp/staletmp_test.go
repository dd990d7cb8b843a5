package staletmp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	// Named by MkdirTemp's form: a fresh one whose owner has exited goes at
	// once; this process's own stays.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	orphan := mk(fmt.Sprintf("acp-bridge-e2e-%d-123", gone.Process.Pid), time.Minute)
	mine := mk(fmt.Sprintf("acp-bridge-e2e-%d-456", os.Getpid()), time.Minute)
	Sweep(tmp, now, "acp-bridge-e2e-*", "acp-bridge-startup-*")
	want := map[string]bool{stale: false, staleStartup: false, fresh: true, other: true, mine: true, orphan: runtime.GOOS == "windows"}
	for p, want := range want {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
