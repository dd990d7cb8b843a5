package bash

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// errNoBash is what the model and the user read when there is no bash.
var errNoBash = errors.New("bash was not found: install Git for Windows (https://git-scm.com/download/win) " +
	"and make sure its bash.exe is on PATH (for example C:\\Program Files\\Git\\bin)")

// Find is bash from PATH: Git for Windows' bash. System32's bash.exe is
// WSL's launcher, which runs the command in a Linux distribution where the
// session's Windows paths do not exist, so it is passed over. Git's usual
// install directories are tried after PATH.
func Find() (string, error) {
	sys := strings.ToLower(filepath.Join(os.Getenv("SystemRoot"), "System32"))
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || strings.ToLower(filepath.Clean(dir)) == sys {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, "bash.exe")); err == nil {
			return p, nil
		}
	}
	for _, env := range []string{"ProgramFiles", "ProgramW6432", "LocalAppData"} {
		base := os.Getenv(env)
		if base == "" {
			continue
		}
		sub := "Git"
		if env == "LocalAppData" {
			sub = filepath.Join("Programs", "Git")
		}
		p := filepath.Join(base, sub, "bin", "bash.exe")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", errNoBash
}
