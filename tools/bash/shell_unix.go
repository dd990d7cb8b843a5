//go:build unix

package bash

import (
	"errors"
	"os/exec"
)

// Find is bash from PATH; without one, the error says what to install.
func Find() (string, error) {
	p, err := exec.LookPath("bash")
	if err != nil {
		return "", errors.New("bash was not found on PATH: install bash with the system's package manager")
	}
	return p, nil
}
