package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY returns a pseudo-terminal's master and its terminal end.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal end: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestBinaryOnATerminal: run by hand, the bridge says on stderr what it is
// and how to try it, and keeps serving what is typed.
func TestBinaryOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	master, tty := openPTY(t)
	cmd := exec.Command(bridgeBinary(t), "--state-dir", "", "--log-level", "error")
	home := t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home}, sandboxEnv()...)
	cmd.Stdin = tty
	stdout, _ := cmd.StdoutPipe()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	go func() { // the terminal echoes what is typed; nobody needs it
		b := make([]byte, 4096)
		for {
			if _, err := master.Read(b); err != nil {
				return
			}
		}
	}()
	master.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		if sc.Scan() {
			got <- sc.Text()
		}
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, `"protocolVersion":1`) {
			t.Errorf("answer %s", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer to a request typed at the terminal; stderr:\n%s", stderr.String())
	}
	for deadline := time.Now().Add(2 * time.Second); !strings.Contains(stderr.String(), "--help") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // stderr is copied by another goroutine
	}
	for _, want := range []string{"Agent Client Protocol", "acp-bridge demo", "agent_servers", "acp-bridge --help"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the note lacks %q:\n%s", want, stderr.String())
		}
	}
}
