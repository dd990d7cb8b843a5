//go:build unix

package procgroup

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// markerEnv is set in the environment of every group's first process, with
// a value no other group has. Children inherit it, so a process that left
// the group (setsid, setpgid) and lost its parent (reparented to init or to
// a subreaper) still says whose it is: its initial environment is readable
// (/proc/<pid>/environ, macOS's kern.procargs2) by the same user.
const markerEnv = "ACP_BRIDGE_GROUP"

var groupCounter atomic.Int64

// newToken names a group uniquely among every bridge on the machine: this
// process's pid and a counter.
func newToken() string {
	return strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(groupCounter.Add(1), 10)
}

// withMarker is env (nil: ours) with the marker set to token; an inherited
// marker (a bridge run by another bridge's command) is replaced.
func withMarker(env []string, token string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, markerEnv+"=") {
			out = append(out, kv)
		}
	}
	return append(out, markerEnv+"="+token)
}

// procInfo is one process as the platform's process table shows it.
type procInfo struct {
	pid, ppid, pgid int
	live            bool   // not a zombie
	start           uint64 // start time in the platform's unit (Linux: clock ticks after boot; macOS: seconds)
	token           string // the marker in its initial environment, when read
}

// members is every live process that belongs to the group: its process
// group, every process carrying its token, and every descendant (by parent
// pid) of those. Never pid 1 or ourselves.
func members(ps []procInfo, pgid int, token string) []int {
	in := map[int]bool{}
	children := map[int][]int{}
	for _, p := range ps {
		if !p.live || p.pid <= 1 || p.pid == os.Getpid() {
			continue
		}
		children[p.ppid] = append(children[p.ppid], p.pid)
		if p.pgid == pgid || (token != "" && p.token == token) {
			in[p.pid] = true
		}
	}
	queue := make([]int, 0, len(in))
	for pid := range in {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range children[pid] {
			if !in[c] {
				in[c] = true
				queue = append(queue, c)
			}
		}
	}
	out := make([]int, 0, len(in))
	for pid := range in {
		out = append(out, pid)
	}
	return out
}

// markerIn finds the marker's value in a NUL-separated environment block.
func markerIn(env []byte) string {
	for len(env) > 0 {
		kv := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			kv, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		if v, ok := bytes.CutPrefix(kv, []byte(markerEnv+"=")); ok {
			return string(v)
		}
	}
	return ""
}

// envOfProcArgs extracts the environment block from macOS's kern.procargs2:
// argc (int32, native order), the executable path, NUL padding, argc
// argument strings, then the environment strings, each NUL-terminated, up
// to an empty string. It is here, not in the darwin file, so every platform
// tests it.
func envOfProcArgs(b []byte) []byte {
	if len(b) < 4 {
		return nil
	}
	argc := int(binary.NativeEndian.Uint32(b))
	b = b[4:]
	i := bytes.IndexByte(b, 0) // end of the executable path
	if i < 0 {
		return nil
	}
	b = b[i:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for ; argc > 0; argc-- {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	// The environment ends at the first empty string.
	if i := bytes.Index(b, []byte{0, 0}); i >= 0 {
		b = b[:i+1]
	}
	return b
}
