package rules

import "testing"

// BenchmarkDecide is the rules' cost per call with a realistic set: a few
// dozen rules against a compound command line.
func BenchmarkDecide(b *testing.B) {
	var s Set
	for _, x := range []string{"Bash(npm run test:*)", "Bash(go test:*)", "Bash(go build:*)", "Bash(git status)", "Bash(git diff:*)",
		"Bash(ls:*)", "Bash(cat:*)", "Edit(./src/**)", "Read(./docs/**)", "mcp__docs"} {
		r, _ := Parse(Allow, x, Source{Kind: "user"})
		s = append(s, r)
	}
	for _, x := range []string{"Bash(rm -rf:*)", "Bash(git push --force:*)", "Read(.env)", "Read(*.pem)", "Bash(*.env*)"} {
		r, _ := Parse(Deny, x, Source{Kind: "user"})
		s = append(s, r)
	}
	t := Target{Tool: "bash", Command: "go test ./... && go build ./cmd/... && git diff --stat"}
	for b.Loop() {
		if _, ok := s.Decide(t); !ok {
			b.Fatal("not allowed")
		}
	}
}
