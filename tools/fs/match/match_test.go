package match_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/tools/fs/match"
	"github.com/google/go-cmp/cmp"
)

// TestTolerances: one table per step of the cascade and per repair, each
// with cases that land (and how the replacement is adapted), the step's
// ambiguity refused, and what it must not accept.
func TestTolerances(t *testing.T) {
	type tc struct {
		name           string
		file, old, new string
		all            bool
		at             int    // start_line
		want           string // the file after the edit; "" with code
		tol            match.Tolerance
		rep            match.Repair
		code, contains string // a refusal
	}
	tables := map[string][]tc{
		"exact": {
			{name: "substring", file: "a b c\n", old: "b", new: "B", want: "a B c\n"},
			{name: "crlf file, lf old and new", file: "a\r\nb\r\nc\r\n", old: "a\nb", new: "x\ny", want: "x\r\ny\r\nc\r\n"},
			{name: "lf file, crlf old", file: "a\nb\nc\n", old: "a\r\nb", new: "z", want: "z\nc\n"},
			{name: "lf file, crlf new takes lf", file: "a\nb\n", old: "b", new: "b1\r\nb2", want: "a\nb1\nb2\n"},
			{name: "mixed file: the raw ending that is there", file: "a\r\nb\r\nc\nd\r\n", old: "c\nd", new: "C\nD", want: "a\r\nb\r\nC\r\nD\r\n"},
			{name: "ambiguous", file: "x\nx\n", old: "x", new: "y", code: match.CodeAmbiguous, contains: "matched 2 times"},
			{name: "all", file: "x\nx\n", old: "x", new: "y", all: true, want: "y\ny\n"},
			{name: "bom kept", file: "\uFEFFa\nb\n", old: "a", new: "A", want: "\uFEFFA\nb\n"},
		},
		"trailing whitespace": {
			{name: "in the file", file: "a  \nb\t\nc\n", old: "a\nb", new: "a\nB", want: "a  \nB\nc\n", tol: match.TrailingSpace},
			{name: "in old", file: "a\nb\n", old: "a \nb ", new: "A\nb", want: "A\nb\n", tol: match.TrailingSpace},
			{name: "ambiguous", file: "a \nb\na\t\nb\n", old: "a\nb", new: "c", code: match.CodeAmbiguous, contains: "ignoring trailing whitespace, it matches 2 places (lines 1-2, lines 3-4)"},
			{name: "all", file: "a \nb\na\t\nb\n", old: "a\nb", new: "c", all: true, want: "c\nc\n", tol: match.TrailingSpace},
		},
		"indentation": {
			{name: "uniform shift, added line indented by the file", file: "    if x {\n        y()\n    }\n", old: "if x {\n    y()\n}", new: "if x {\n    y()\n    z()\n}",
				want: "    if x {\n        y()\n        z()\n    }\n", tol: match.Indentation},
			{name: "spaces to tabs", file: "\tif x {\n\t\ty()\n\t}\n", old: "if x {\n    y()\n}", new: "if x {\n    w()\n}",
				want: "\tif x {\n\t\tw()\n\t}\n", tol: match.Indentation},
			{name: "deeper than any old line: one more file step", file: "\tif x {\n\t\ty()\n\t}\n", old: "if x {\n  y()\n}", new: "if x {\n  if z {\n    y()\n  }\n}",
				want: "\tif x {\n\t\tif z {\n\t\t\ty()\n\t\t}\n\t}\n", tol: match.Indentation},
			{name: "flat old: the file's indentation by position", file: "  a {\n    b\n  }\n", old: "a {\nb\n}", new: "a {\nc\n}",
				want: "  a {\n    c\n  }\n", tol: match.Indentation},
			{name: "kept lines keep the file's bytes", file: "  a  \n  b\n", old: "a\nb", new: "a\nc", want: "  a  \n  c\n", tol: match.Indentation},
			{name: "model indented more: the shift is removed", file: "x()\ny()\n", old: "    x()\n    y()", new: "    x()\n    z()", want: "x()\nz()\n", tol: match.Indentation},
			{name: "ambiguous", file: "  a\n  b\n    a\n    b\n", old: "a\nb", new: "c", code: match.CodeAmbiguous, contains: "ignoring indentation"},
			{name: "all", file: "  a\n  b\n    a\n    b\n", old: "a\nb", new: "c", all: true, want: "  c\n    c\n", tol: match.Indentation},
		},
		"whitespace inside lines": {
			{name: "runs", file: "x  :=   f( a,  b )\n", old: "x := f( a, b )", new: "x := g(a, b)", want: "x := g(a, b)\n", tol: match.InnerSpace},
			{name: "a kept line keeps its alignment", file: "a   = 1\nbb  = 2\n", old: "a = 1\nbb = 2", new: "a = 1\nbb = 3", want: "a   = 1\nbb = 3\n", tol: match.InnerSpace},
			{name: "ambiguous", file: "a  b\na   b\n", old: "a b", new: "c", code: match.CodeAmbiguous, contains: "ignoring whitespace"},
			{name: "not across a missing space", file: "a=b\n", old: "a = b", new: "c", code: match.CodeNotFound},
			{name: "inside a line", file: "r := calc(a,   b) + 1\n", old: "calc(a, b)", new: "calc(b, a)", want: "r := calc(b, a) + 1\n", tol: match.InnerSpace},
			{name: "inside a line, not across lines", file: "f(a,\n  b)\n", old: "f(a, b)", new: "g", code: match.CodeNotFound},
			{name: "inside a line, ambiguous", file: "x(a,  b) y(a,   b)\n", old: "(a, b)", new: "z", code: match.CodeAmbiguous, contains: "2 places (line 1 (2 times))"},
		},
		"punctuation": {
			{name: "en dash in the file kept for changed text", file: "1\u20132\n", old: "1-2", new: "1-3", want: "1\u20133\n", tol: match.Punctuation},
			{name: "hyphens in the file: the dash is not applied", file: "a - b \u2013 c\n", old: "a - b - c", new: "a - b - d", want: "a - b - d\n", tol: match.Punctuation},
			{name: "curly quotes in the file", file: "say(\u201chi\u201d)\n", old: "say(\"hi\")", new: "say(\"bye\")", want: "say(\u201cbye\u201d)\n", tol: match.Punctuation},
			{name: "curly quotes in old, ascii file", file: "say(\"hi\")\n", old: "say(\u201chi\u201d)", new: "say(\u201cbye\u201d)", want: "say(\"bye\")\n", tol: match.Punctuation},
			{name: "apostrophe", file: "it\u2019s\n", old: "it's", new: "it's not", want: "it\u2019s not\n", tol: match.Punctuation},
			{name: "inside a line", file: "Say \u201chello\u201d twice.\n", old: "\"hello\"", new: "\"bye\"", want: "Say \u201cbye\u201d twice.\n", tol: match.Punctuation},
			{name: "ambiguous", file: "\u201ca\u201d\n\u201ca\u201d\n", old: "\"a\"", new: "b", code: match.CodeAmbiguous, contains: "typographic punctuation"},
		},
		"line numbers": {
			{name: "our read's prefixes", file: "a\nb\nc\n", old: "2: b\n3: c", new: "2: B\n3: c", want: "a\nB\nc\n", rep: match.LineNumbers},
			{name: "pipes, right-aligned", file: "a\nb\n", old: "  1 | a\n  2 | b", new: "  1 | A\n  2 | b", want: "A\nb\n", rep: match.LineNumbers},
			{name: "some lines, numbers increasing", file: "a\nb\nc\n", old: "1: a\nb\n3: c", new: "1: a\nB\n3: c", want: "a\nB\nc\n", rep: match.LineNumbers},
			{name: "some lines, numbers not increasing: not stripped", file: "a\nb\nc\n", old: "3: a\nb\n1: c", new: "x", code: match.CodeNotFound},
			{name: "with indentation lost", file: "\tif a {\n\t\tb()\n\t}\n", old: "1: if a {\n2:     b()\n3: }", new: "1: if a {\n2:     c()\n3: }",
				want: "\tif a {\n\t\tc()\n\t}\n", rep: match.LineNumbers, tol: match.Indentation},
			{name: "the file's own numbers match exactly", file: "1: a\n2: b\n", old: "1: a", new: "1: z", want: "1: z\n2: b\n"},
			{name: "ambiguous after stripping", file: "a\nb\na\n", old: "7: a", new: "z", code: match.CodeAmbiguous, contains: "without the line-number prefixes"},
		},
		"escapes": {
			{name: "newline and tab", file: "if a {\n\tb()\n}\n", old: "if a {\\n\\tb()\\n}", new: "if a {\\n\\tc()\\n}", want: "if a {\n\tc()\n}\n", rep: match.Escapes},
			{name: "quote, new not escaped", file: "s = 'it's'\n", old: "s = 'it\\'s'", new: "s = 'it is'", want: "s = 'it is'\n", rep: match.Escapes},
			{name: "backslashes", file: "p = \"a\\b\"\n", old: "p = \"a\\\\b\"", new: "p = \"a\\\\c\"", want: "p = \"a\\c\"\n", rep: match.Escapes},
			{name: "new's own escape of another kind is meant literally", file: "fmt.Println(\"hi\")\n", old: "fmt.Println(\\\"hi\\\")", new: "fmt.Printf(\"hi\\n\")",
				want: "fmt.Printf(\"hi\\n\")\n", rep: match.Escapes},
			{name: "new escaped like old is unescaped", file: "fmt.Println(\"hi\")\n", old: "fmt.Println(\\\"hi\\\")", new: "fmt.Printf(\\\"hi\\\\n\\\")",
				want: "fmt.Printf(\"hi\\n\")\n", rep: match.Escapes},
			{name: "real escapes in the file match exactly", file: "s = \"a\\nb\"\n", old: "\"a\\nb\"", new: "\"a\\nc\"", want: "s = \"a\\nc\"\n"},
		},
		"blank ends": {
			{name: "leading blank line", file: "a\nb\n", old: "\n\nb\n", new: "\n\nB\n", want: "a\nB\n", rep: match.BlankEnds},
			{name: "trailing blank line", file: "a\nb", old: "a\n\n", new: "A\n\n", want: "A\nb", rep: match.BlankEnds},
		},
		"start line": {
			{name: "exact, picks the second", file: "x\ny\nx\n", old: "x", new: "z", at: 3, want: "x\ny\nz\n"},
			{name: "exact, one match elsewhere still lands", file: "x\ny\n", old: "x", new: "z", at: 9, want: "z\ny\n"},
			{name: "exact, none starts there", file: "x\ny\nx\n", old: "x", new: "z", at: 2, code: match.CodeAmbiguous,
				contains: "old_string matched 2 times in \"f\", starting at line 1, line 3. start_line is 2, where not exactly one of them starts."},
			{name: "exact, two inside the line named", file: "x x\nx\n", old: "x", new: "z", at: 1, code: match.CodeAmbiguous, contains: "line 1 (2 times), line 2"},
			{name: "ignoring indentation", file: "  a\n  b\n    a\n    b\n", old: "a\nb", new: "c", at: 3, want: "  a\n  b\n    c\n", tol: match.Indentation},
			{name: "inside a line", file: "f(a,  b)\ng(a,   b)\n", old: "(a, b)", new: "(b, a)", at: 2, want: "f(a,  b)\ng(b, a)\n", tol: match.InnerSpace},
			{name: "read's prefixes name the line", file: "a\nb\na\nb\n", old: "3: a\n4: b", new: "3: A\n4: b", want: "a\nb\nA\nb\n", rep: match.LineNumbers},
			{name: "read's prefixes name a line where none starts", file: "a\nb\na\nb\n", old: "2: a\n3: b", new: "x", code: match.CodeAmbiguous,
				contains: "without the line-number prefixes, it matches 2 places (line 1, line 3). start_line is 2"},
			{name: "start_line over read's prefixes", file: "a\nb\na\nb\n", old: "3: a\n4: b", new: "3: A\n4: b", at: 1, want: "A\nb\na\nb\n", rep: match.LineNumbers},
		},
		"every match listed": {
			{name: "ignoring indentation, more than five", file: strings.Repeat(" a\n  b\n", 7), old: "a\nb", new: "c", code: match.CodeAmbiguous,
				contains: "it matches 7 places (lines 1-2, lines 3-4, lines 5-6, lines 7-8, lines 9-10, lines 11-12, lines 13-14)"},
		},
		"block anchor": {
			{name: "one line of the middle drifted a little", file: "func f() {\n\tx := load(1)\n\tuse(x)\n}\n", old: "func f() {\n\tx := load(2)\n\tuse(x)\n}", new: "func f() {\n\tx := load(2)\n\tuse(x)\n\tlog(x)\n}",
				want: "func f() {\n\tx := load(1)\n\tuse(x)\n\tlog(x)\n}\n", tol: match.BlockAnchor},
			{name: "old has a middle line more than the file", file: "begin\n  total = count * 2\nend\n", old: "begin\n  total = count*2\n  \nend", new: "x", code: match.CodeNotFound},
			{name: "middle far from the file's", file: "start()\n  one()\n  two()\nend()\n", old: "start()\n  uno()\n  dos()\nend()", new: "start()\nend()",
				code: match.CodeNotFound, contains: "Its first and last lines match lines 1 and 4, but the lines between are 50% alike (the least 40%)"},
			{name: "anchors in two places, middles close", file: "a {\n  x = 1\n}\na {\n  x = 2\n}\n", old: "a {\n  x = 3\n}", new: "a {}", code: match.CodeAmbiguous,
				contains: "its first and last lines match, with the lines between close to the file's, in 2 places (lines 1-3, lines 4-6). Set start_line"},
			{name: "anchors in two places, one middle close", file: "a {\n  x = 1\n}\na {\n  unrelated()\n}\n", old: "a {\n  x = 3\n}", new: "a {}", code: match.CodeAmbiguous,
				contains: "its first and last lines are in several places, and the lines between are close to the file's only at lines 1-3. Set start_line"},
			{name: "anchors in two places, no middle close", file: "a {\n  p()\n}\na {\n  q()\n}\n", old: "a {\n  x = 3\n}", new: "a {}", code: match.CodeNotFound},
			{name: "anchors in two places, start_line picks", file: "a {\n  x = 1\n}\na {\n  x = 2\n}\n", old: "a {\n  x = 3\n}", new: "a {\n  x = 4\n}", at: 4,
				want: "a {\n  x = 1\n}\na {\n  x = 4\n}\n", tol: match.BlockAnchor},
			{name: "a line the file has more", file: "a()\nb()\nlog()\nc()\n", old: "a()\nb()\nc()", new: "a()\nc()", code: match.CodeNotFound},
		},
		"refused": {
			{name: "drifted middle", file: "f() {\n  a()\n  b()\n  c()\n}\n", old: "f() {\n  a()\n  x()\n  c()\n}", new: "f() {}",
				code: match.CodeNotFound, contains: "The nearest region is lines 1-5:\n1: f() {\n2:   a()\n3:   b()\n4:   c()\n5: }\nWhat differs:\n- line 3: the file has \"  b()\" where old_string has \"  x()\""},
			{name: "elided middle", file: "a\nb\nc\n", old: "a\n...\nc", new: "a\nc", code: match.CodeNotFound, contains: "line 2: the file has \"b\" where old_string has \"...\""},
			{name: "nothing in common", file: "a\n", old: "zzz", new: "y", code: match.CodeNotFound, contains: "no line of it is in the file"},
			{name: "region found past line-number prefixes", file: "a\nb\nc\n", old: "1: a\n2: x\n3: c", new: "y", code: match.CodeNotFound, contains: "lines 1-3"},
		},
	}
	for table, cases := range tables {
		for _, tt := range cases {
			t.Run(table+"/"+tt.name, func(t *testing.T) {
				r, err := match.FindAt("f", tt.file, tt.old, tt.new, tt.all, tt.at)
				if tt.code != "" {
					var ref *match.Refusal
					if !errors.As(err, &ref) || ref.Code != tt.code || !strings.Contains(ref.Message, tt.contains) {
						t.Fatalf("Find = %+v, %v\nwant %s containing %q", r, err, tt.code, tt.contains)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, match.Apply(tt.file, r.Edits)); diff != "" {
					t.Errorf("file (-want +got):\n%s", diff)
				}
				if r.Tolerance != tt.tol || r.Repair != tt.rep {
					t.Errorf("matched %d/%d (%q), want %d/%d", r.Tolerance, r.Repair, r.Note(), tt.tol, tt.rep)
				}
			})
		}
	}
}
