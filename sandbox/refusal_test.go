package sandbox

import "testing"

func TestRefusal(t *testing.T) {
	p := &Policy{Mode: WorkspaceWrite, Roots: []string{"/w"}, TempDir: "/t"}
	for _, tc := range []struct {
		name   string
		p      *Policy
		code   int
		output string
		want   string // "" for none
	}{
		{"bash redirect", p, 1, "bash: line 1: /etc/x: Permission denied\n", "bash: line 1: /etc/x: Permission denied"},
		{"touch", p, 1, "touch: cannot touch '/home/u/x': Permission denied", "touch: cannot touch '/home/u/x': Permission denied"},
		{"connect", p, 1, "bash: connect: Permission denied", "bash: connect: Permission denied"},
		{"socket", p, 1, "curl: (7) Couldn't connect to server\nsocket: Operation not permitted", "socket: Operation not permitted"},
		{"inside the roots", p, 1, "touch: cannot touch '/w/ro/x': Permission denied", ""},
		{"relative inside", p, 1, "bash: sub/x: Permission denied", ""},
		{"temp dir", p, 1, "bash: /t/x: Permission denied", ""},
		{"succeeded", p, 0, "bash: /etc/x: Permission denied", ""},
		{"unrelated failure", p, 2, "grep: nothing", ""},
		{"unconfined", &Policy{Mode: Off}, 1, "bash: /etc/x: Permission denied", ""},
		{"read-only inside", &Policy{Mode: ReadOnly, Roots: []string{"/w"}, TempDir: "/t"}, 1, "touch: cannot touch '/w/x': Permission denied", "touch: cannot touch '/w/x': Permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Refusal(tc.p, "/w", tc.code, tc.output)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("Refusal = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}
