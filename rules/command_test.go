package rules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// PlainCommands is the reading of a line allow rules and the bash tool's
// remembered answers share. The cases are the lines the two lexers it
// replaced disagreed on (2>&1, braces, assignments, quotes), the plain
// ones around them, and the lines bash's grammar reads otherwise than the
// hand-written lexer this package had before (comments, continuations,
// keywords).
func TestPlainCommands(t *testing.T) {
	tests := []struct {
		line string
		want []string // nil: not plain
	}{
		{"go test ./...", []string{"go test ./..."}},
		{"go test  &&  go vet; git diff | head -5", []string{"go test", "go vet", "git diff", "head -5"}},
		{"go test 2>&1", []string{"go test"}}, // was a redirection to the bash tool
		{"go test 2>&1 | tee log", []string{"go test", "tee log"}},
		{"2>&1 go test", []string{"go test"}},
		{"echo '2>&1'", []string{"echo '2>&1'"}}, // was `echo ''` to the rules
		{`echo "a 2>&1"`, []string{`echo "a 2>&1"`}},
		{"go test 12>&1", nil},
		{"go test 2>&1x", nil},
		{"go test 2>/dev/null", nil},
		{"echo {a,b}", nil}, // was plain to the bash tool
		{"{ rm -rf ~; }", nil},
		{"FOO=1 go test", nil},
		{"_A1=x go test", nil},
		{"go test; PATH=/tmp go build", nil},
		{"a.b=1 make", []string{"a.b=1 make"}}, // not an assignment: the shell runs a.b=1; was refused by the rules
		{"x-y=1 make", []string{"x-y=1 make"}}, // was refused by the rules only
		{"1A=1 make", []string{"1A=1 make"}},   // was refused by both
		{`"A=1" make`, []string{`"A=1" make`}}, // quoted: a word, not an assignment
		{"make A=1", []string{"make A=1"}},     // an argument
		{"go test &", nil},
		{"echo $(id)", nil},
		{`echo "$HOME"`, nil},
		{"echo 'a;b' \"c|d\"", []string{"echo 'a;b' \"c|d\""}},
		{`echo a\;b`, nil},
		{"echo 'open", nil},
		{"cat < in", nil},
		{"(cd x)", nil},
		{"go test\nrm x", []string{"go test", "rm x"}},
		{" ; ", nil},
		// Read by bash's grammar (readLine), the reading deny and ask
		// rules use: a comment runs nothing, a line continuation between
		// words is a blank, and keywords and declarations are not plain
		// commands.
		{"go test # note", []string{"go test"}},
		{"go test # $(rm -rf ~)", []string{"go test"}},
		{"go test \\\n  -run X ./...", []string{"go test -run X ./..."}},
		{"go te\\\nst", nil}, // a continuation inside a word is a backslash
		{"echo a#b", []string{"echo a#b"}},
		{"# only a comment", nil},
		{"time go test", nil},
		{"! go test", nil},
		{"export GOFLAGS=-mod=mod; go test", nil}, // sets a variable for what follows, like A=1
		{"a+=b go test", nil},
		{"if true; then rm -rf ~; fi", nil},
		{"[[ -f x ]] && go test", nil},
		{"[ -f x ] && go test", []string{"[ -f x ]", "go test"}},
		{"&& go test", nil}, // bash refuses it: a syntax error
		{"go test &&", nil},
	}
	for _, tt := range tests {
		got, ok := PlainCommands(tt.line)
		if ok != (tt.want != nil) {
			t.Errorf("%q: plain %v, want %v (%q)", tt.line, ok, tt.want != nil, got)
			continue
		}
		if diff := cmp.Diff(tt.want, got); ok && diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.line, diff)
		}
	}
}
