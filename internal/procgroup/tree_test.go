//go:build unix

package procgroup

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	ps := []procInfo{
		{pid: 100, ppid: 50, pgid: 100, live: true},                  // the leader
		{pid: 101, ppid: 100, pgid: 100, live: true},                 // a child in the group
		{pid: 102, ppid: 1, pgid: 102, live: true, token: "7.1"},     // setsid'd daemon, orphaned, marked
		{pid: 103, ppid: 102, pgid: 102, live: true},                 // the daemon's child, marker cleared
		{pid: 104, ppid: 101, pgid: 104, live: true},                 // left the group, parent alive, unmarked
		{pid: 105, ppid: 1, pgid: 105, live: true, token: "7.2"},     // another group's
		{pid: 106, ppid: 100, pgid: 100, live: false},                // a zombie
		{pid: 1, ppid: 0, pgid: 1, live: true, token: "7.1"},         // never init
		{pid: os.Getpid(), ppid: 1, pgid: 100, live: true},           // never ourselves
		{pid: 107, ppid: 50, pgid: 107, live: true},                  // a stranger
		{pid: 108, ppid: 107, pgid: 100, live: true, token: "other"}, // in the group by pgid
	}
	tests := []struct {
		name  string
		pgid  int
		token string
		want  []int
	}{
		{"group, marker and descendants", 100, "7.1", []int{100, 101, 102, 103, 104, 108}},
		{"without a marker: the group and its descendants", 100, "", []int{100, 101, 104, 108}},
		{"a group whose leader is gone: the marker alone", 999, "7.2", []int{105}},
		{"nothing", 999, "", []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := members(ps, tt.pgid, tt.token)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("members = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMarkerIn(t *testing.T) {
	tests := []struct{ env, want string }{
		{"", ""},
		{"A=1\x00ACP_BRIDGE_GROUP=12.3\x00B=2\x00", "12.3"},
		{"ACP_BRIDGE_GROUP=12.3", "12.3"},
		{"XACP_BRIDGE_GROUP=1\x00", ""},
		{"ACP_BRIDGE_GROUPS=1\x00", ""},
	}
	for _, tt := range tests {
		if got := markerIn([]byte(tt.env)); got != tt.want {
			t.Errorf("markerIn(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestWithMarker(t *testing.T) {
	got := withMarker([]string{"A=1", markerEnv + "=outer.1", "B=2"}, "me.2")
	want := []string{"A=1", "B=2", markerEnv + "=me.2"}
	if !slices.Equal(got, want) {
		t.Errorf("withMarker = %q, want %q", got, want)
	}
	if env := withMarker(nil, "me.3"); !slices.Contains(env, markerEnv+"=me.3") || len(env) < len(os.Environ()) {
		t.Errorf("withMarker(nil) does not extend our environment: %q", env)
	}
}

// procArgs builds a kern.procargs2 buffer the way macOS lays it out.
func procArgs(exe string, argv, env []string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, uint32(len(argv)))
	b = append(b, exe...)
	b = append(b, 0, 0, 0, 0) // NUL and padding
	for _, a := range argv {
		b = append(append(b, a...), 0)
	}
	for _, e := range env {
		b = append(append(b, e...), 0)
	}
	return append(b, 0, 'j', 'u', 'n', 'k', 0)
}

func TestEnvOfProcArgs(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want string // the marker found
	}{
		{"marked", procArgs("/bin/sleep", []string{"sleep", "30"}, []string{"HOME=/h", markerEnv + "=5.1"}), "5.1"},
		{"the marker as an argument does not count", procArgs("/bin/x", []string{"x", markerEnv + "=5.9"}, []string{"HOME=/h"}), ""},
		{"no environment", procArgs("/bin/x", []string{"x"}, nil), ""},
		{"after the environment's end", append(procArgs("/bin/x", []string{"x"}, []string{"A=1"}), markerEnv+"=5.2\x00"...), ""},
		{"short", []byte{1, 0}, ""},
		{"argc beyond the buffer", procArgs("/bin/x", []string{"x"}, nil)[:8], ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markerIn(envOfProcArgs(tt.b)); got != tt.want {
				t.Errorf("marker %q, want %q (env %q)", got, tt.want, strings.ReplaceAll(string(envOfProcArgs(tt.b)), "\x00", "|"))
			}
		})
	}
}
