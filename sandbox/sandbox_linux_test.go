//go:build linux

package sandbox

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the test binary be its own helper, as acp-bridge is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		os.Exit(HelperMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == connectArg {
		os.Exit(connectMain(os.Args[2:]))
	}
	HasHelper = true
	os.Exit(m.Run())
}

func needLandlock(t *testing.T) {
	t.Helper()
	if s := Probe(); !s.Available {
		t.Skipf("no sandbox here: %s", s.Reason)
	}
}

// run runs a bash line under p and returns its combined output and error.
func run(t *testing.T, p *Policy, dir, line string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	if err := Wrap(cmd, p); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestFilesystem(t *testing.T) {
	needLandlock(t)
	root, outside, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	ww := &Policy{Mode: WorkspaceWrite, Roots: []string{root}, TempDir: tmp}
	ro := &Policy{Mode: ReadOnly, Roots: []string{root}, TempDir: tmp}
	if err := os.WriteFile(filepath.Join(outside, "readme"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		p      *Policy
		line   string
		ok     bool
		absent string // a file that must not exist afterwards
	}{
		{"write inside", ww, "echo x > in.txt && mkdir -p a/b && mv in.txt a/b/", true, ""},
		{"write outside", ww, "echo x > " + outside + "/out.txt", false, filepath.Join(outside, "out.txt")},
		{"read outside", ww, "cat " + outside + "/readme", true, ""},
		{"temp dir", ww, `echo x > "$TMPDIR/t" && cat <<<here-doc`, true, ""},
		{"remove outside", ww, "rm " + outside + "/readme", false, ""},
		{"read-only inside", ro, "touch ro.txt", false, filepath.Join(root, "ro.txt")},
		{"read-only temp", ro, `echo x > "$TMPDIR/t2"`, true, ""},
		{"dev null", ro, "echo x > /dev/null", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.p, root, tc.line)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v; output: %s", err, tc.ok, out)
			}
			if !tc.ok && !strings.Contains(out, "Permission denied") {
				t.Errorf("output %q does not say Permission denied", out)
			}
			if tc.absent != "" {
				if _, err := os.Stat(tc.absent); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists (%v)", tc.absent, err)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "readme")); err != nil {
		t.Errorf("the outside file went: %v", err)
	}
}

// listen is a loopback port that takes connections (an httptest
// server's) for as long as the test runs; it returns its address.
func listen(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

func TestNetwork(t *testing.T) {
	needLandlock(t)
	_, port, _ := net.SplitHostPort(listen(t))
	root := t.TempDir()
	connect := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected"
	off := &Policy{Mode: WorkspaceWrite, Roots: []string{root}, TempDir: t.TempDir()}
	if out, err := run(t, off, root, connect); err == nil || strings.Contains(out, "connected") {
		t.Errorf("network off: connected (%v): %s", err, out)
	} else {
		t.Logf("refused: %s", out)
	}
	on := *off
	on.Network = true
	if out, err := run(t, &on, root, connect); err != nil || !strings.Contains(out, "connected") {
		t.Errorf("network on: %v: %s", err, out)
	}
	// What Landlock alone would let through: UDP (Multipath TCP has a
	// test of its own).
	if out, err := run(t, off, root, "exec 3<>/dev/udp/127.0.0.1/"+port+" && echo opened"); err == nil || strings.Contains(out, "opened") {
		t.Errorf("UDP: opened (%v): %s", err, out)
	}
}

// Multipath TCP is TCP on the wire but another protocol to Landlock,
// whose TCP rules do not apply to it: with the network off, the seccomp
// filter must refuse the socket itself. The same program first connects
// unconfined and under a policy that allows the network, so the refusal
// is the rule's doing and not a kernel without MPTCP; the refusal must be
// seccomp's (socket, EPERM), the step that holds.
func TestMultipathTCP(t *testing.T) {
	needLandlock(t)
	addr := listen(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	connect := func(p *Policy) (string, error) {
		cmd := exec.Command(self, connectArg, strconv.Itoa(ipprotoMPTCP), addr)
		if p != nil {
			if err := Wrap(cmd, p); err != nil {
				t.Fatal(err)
			}
		}
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := connect(nil); err != nil || out != "connected" {
		t.Skipf("Multipath TCP does not connect here even unconfined (%s): net.mptcp.enabled is 0 or the kernel lacks it, so there is nothing for the sandbox to refuse", out)
	}
	root := t.TempDir()
	off := &Policy{Mode: WorkspaceWrite, Roots: []string{root}, TempDir: t.TempDir()}
	on := *off
	on.Network = true
	if out, err := connect(&on); err != nil || out != "connected" {
		t.Fatalf("network allowed: %v: %s", err, out)
	}
	out, err := connect(off)
	if err == nil || !strings.HasPrefix(out, "socket: EPERM") {
		t.Errorf("network off: Multipath TCP %q (%v), want the socket refused with EPERM", out, err)
	}
}

func TestHelperRefusesBadArgs(t *testing.T) {
	for _, args := range [][]string{{}, {"--mode", "nope", "--", "true", "true"}, {"--mode", "off"}, {"--", "true", "true"}, {"--tmp"}} {
		if _, _, _, err := parseHelperArgs(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
