//go:build darwin

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sandboxExec is called by its absolute path: a PATH entry could shadow it.
const sandboxExec = "/usr/bin/sandbox-exec"

func probe() Support {
	if _, err := os.Stat(sandboxExec); err != nil {
		return Support{Reason: sandboxExec + " is missing on this Mac"}
	}
	return Support{Available: true, Mechanism: "Seatbelt (sandbox-exec)",
		NetworkNote: "no network refuses every socket but Unix ones"}
}

// wrap runs the command under sandbox-exec with a generated profile;
// paths are passed as parameters, never pasted into the profile.
func wrap(cmd *exec.Cmd, p *Policy) error {
	profile, params := profileFor(p)
	args := []string{sandboxExec, "-p", profile}
	for i, v := range params {
		args = append(args, fmt.Sprintf("-DP%d=%s", i, v))
	}
	path, argv := target(cmd)
	// sandbox-exec takes the program by path and keeps argv[1:].
	cmd.Path = sandboxExec
	cmd.Args = append(append(args, "--", path), argv[1:]...)
	return nil
}

// profileFor is a Seatbelt profile meaning what the Linux helper does:
// read anything, write under the writable directories (canonical paths:
// /tmp is /private/tmp) and the usual devices, the network only when
// allowed.
func profileFor(p *Policy) (string, []string) {
	var b strings.Builder
	b.WriteString(`(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow file-read*)
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow pseudo-tty)
(allow file-ioctl)
(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))
`)
	var params []string
	for _, d := range p.Writable() {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		fmt.Fprintf(&b, "(allow file-write* (subpath (param \"P%d\")))\n", len(params))
		params = append(params, d)
	}
	if p.Network {
		b.WriteString("(allow network*)\n(allow system-socket)\n")
	} else {
		b.WriteString("(allow system-socket (socket-domain AF_UNIX))\n(allow network* (local unix-socket))\n(allow network* (remote unix-socket))\n")
	}
	return b.String(), params
}

// confineAndExec: the helper mode is Linux's; macOS confines through
// sandbox-exec directly.
func confineAndExec(*Policy, string, []string) error {
	return errors.New("the helper mode is for Linux; on macOS commands run under " + sandboxExec)
}
