//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// maxABI is the newest Landlock ABI this package asks for (go-landlock's
// preset of it); a newer kernel is used at that level.
const maxABI = 7

func probe() Support {
	abi, err := llsyscall.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return Support{Reason: "this Linux kernel has no Landlock (it needs 5.13 or newer built with CONFIG_SECURITY_LANDLOCK), or a container's seccomp profile hides it"}
	case errors.Is(err, syscall.EOPNOTSUPP):
		return Support{Reason: "Landlock is built into this kernel but not enabled: add landlock to the lsm= boot parameter"}
	case err != nil:
		return Support{Reason: "Landlock could not be queried: " + err.Error()}
	case abi < 1:
		return Support{Reason: fmt.Sprintf("the kernel reports Landlock ABI %d", abi)}
	}
	s := Support{Available: true, Mechanism: fmt.Sprintf("Landlock ABI %d + seccomp", abi)}
	if !seccomp.Supported() {
		s = Support{Reason: "seccomp filters are not available, and without them \"no network\" could not hold"}
	}
	s.NetworkNote = "no network refuses TCP (Landlock) and every other internet socket (seccomp); Unix sockets by path (e.g. docker.sock) stay reachable"
	return s
}

// wrap starts the command through the helper mode of this very binary:
// /proc/self/exe stays valid even when the file was replaced by an
// upgrade.
func wrap(cmd *exec.Cmd, p *Policy) error {
	if !HasHelper {
		return fmt.Errorf("%w: this program has no sandbox helper mode", ErrUnavailable)
	}
	path, argv := target(cmd)
	cmd.Path = "/proc/self/exe"
	cmd.Args = append([]string{"acp-bridge"}, HelperArgs(p, path, argv)...)
	return nil
}

// confineAndExec is the helper's body: Landlock on the filesystem (and
// TCP), seccomp on the sockets Landlock does not see, then exec. Both
// restrictions are inherited by everything the command starts and cannot
// be lifted.
func confineAndExec(p *Policy, path string, argv []string) error {
	if s := Probe(); !s.Available {
		return errors.New(s.Reason)
	}
	abi, _ := llsyscall.LandlockGetABIVersion()
	if !filepath.IsAbs(path) && filepath.Base(path) == path {
		lp, err := exec.LookPath(path)
		if err != nil {
			return err
		}
		path = lp
	}
	if err := landlockRestrict(p, min(abi, maxABI)); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if !p.Network {
		if err := seccompNoNetwork(abi >= 4); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return syscall.Exec(path, argv, os.Environ())
}

// devices a command writes to whatever the mode: the bit bucket, the
// terminal it may open, pseudo-terminals.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx"}

func landlockRestrict(p *Policy, abi int) error {
	cfg := [...]landlock.Config{1: landlock.V1, 2: landlock.V2, 3: landlock.V3, 4: landlock.V4, 5: landlock.V5, 6: landlock.V6, 7: landlock.V7}[abi]
	// BestEffort only steps down rights this kernel lacks (probe has
	// checked Landlock is there at all): never to nothing.
	cfg = cfg.BestEffort()
	write := landlock.RWDirs(p.Writable()...).IgnoreIfMissing() // a root removed since: not writable
	if abi >= 2 {
		write = write.WithRefer() // renames and links across directories inside the roots
	}
	devs := landlock.RWFiles(devices...).IgnoreIfMissing()
	pts := landlock.RWDirs("/dev/pts", "/dev/shm").IgnoreIfMissing()
	if abi >= 5 {
		devs, pts = devs.WithIoctlDev(), pts.WithIoctlDev()
	}
	rules := []landlock.Rule{landlock.RODirs("/"), devs, pts}
	if len(p.Writable()) > 0 {
		rules = append(rules, write)
	}
	if p.Network {
		// Network allowed: the filesystem only (Restrict would also
		// handle TCP, with no port allowed).
		return cfg.RestrictPaths(rules...)
	}
	return cfg.Restrict(rules...)
}

// seccompNoNetwork refuses (EPERM) every socket but Unix and netlink
// ones, and of internet sockets everything but plain TCP, which Landlock
// refuses to connect or bind (tcpByLandlock; without it, every internet
// socket): UDP, raw and ICMP sockets, Multipath TCP and SCTP, which
// Landlock does not see. io_uring, which can make sockets without
// socket(2), is refused too. An argument with bits above 32 is refused:
// the kernel reads these as int, a filter comparing 64 bits would not.
func seccompNoNetwork(tcpByLandlock bool) error {
	const (
		afUnix, afInet, afNetlink, afInet6 = 1, 2, 16, 10
		ipprotoTCP                         = 6
	)
	type c = seccomp.Condition
	var conds []seccomp.NameWithConditions
	add := func(cs ...c) {
		conds = append(conds, seccomp.NameWithConditions{Name: "socket", Conditions: cs})
	}
	for arg := uint32(0); arg < 3; arg++ {
		add(c{Argument: arg, Operation: seccomp.GreaterThan, Value: 0xffffffff})
	}
	add(c{Argument: 0, Operation: seccomp.NotEqual, Value: afUnix}, c{Argument: 0, Operation: seccomp.NotEqual, Value: afNetlink},
		c{Argument: 0, Operation: seccomp.NotEqual, Value: afInet}, c{Argument: 0, Operation: seccomp.NotEqual, Value: afInet6})
	for _, dom := range []uint64{afInet, afInet6} {
		if !tcpByLandlock {
			add(c{Argument: 0, Operation: seccomp.Equal, Value: dom})
			continue
		}
		// Not SOCK_STREAM (1): any of the type's low bits 1-3 set.
		add(c{Argument: 0, Operation: seccomp.Equal, Value: dom}, c{Argument: 1, Operation: seccomp.BitsSet, Value: 0xe})
		// A protocol other than the default (0) and TCP: MPTCP, SCTP.
		add(c{Argument: 0, Operation: seccomp.Equal, Value: dom}, c{Argument: 2, Operation: seccomp.NotEqual, Value: 0},
			c{Argument: 2, Operation: seccomp.NotEqual, Value: ipprotoTCP})
	}
	return seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Action: seccomp.ActionErrno, NamesWithCondtions: conds},
				{Action: seccomp.ActionErrno, Names: []string{"io_uring_setup"}},
			},
		},
	})
}
