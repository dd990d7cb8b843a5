package conformance

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// SkipUnlessConfined skips a test whose transcript runs commands in the
// bridge's default sandbox mode where the bridge binary bin cannot confine
// them: there it refuses to run commands and says so in the session
// (README "Sandbox"), so a transcript recorded where it confines cannot be
// replayed. It asks the bridge once, by its own word: doctor's sandbox
// line (ACP_BRIDGE_SANDBOX_PROBE=none simulates a kernel without
// Landlock). The scenario goldens here and acp-conform's both use it.
func SkipUnlessConfined(t testing.TB, bin string) {
	t.Helper()
	confines.once.Do(func() { confines.ok, confines.line = bridgeConfines(bin) })
	if !confines.ok {
		t.Skipf("the bridge cannot confine commands here (doctor: %s): it would refuse the commands this transcript runs in its default sandbox mode", confines.line)
	}
}

var confines struct {
	once sync.Once
	ok   bool
	line string
}

// bridgeConfines runs bin's doctor in an empty home and reads its sandbox
// line: whether the default mode confines, and the line itself.
func bridgeConfines(bin string) (bool, string) {
	home, err := os.MkdirTemp("", "acp-conformance-doctor-")
	if err != nil {
		return false, err.Error()
	}
	defer os.RemoveAll(home)
	cmd := exec.Command(bin, "doctor", "--model", "script:/dev/null")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home)
	out, _ := cmd.CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, " sandbox ") {
			return strings.HasPrefix(l, "ok   sandbox  workspace-write"), strings.TrimSpace(l)
		}
	}
	return false, "doctor said nothing of the sandbox: " + string(out)
}
