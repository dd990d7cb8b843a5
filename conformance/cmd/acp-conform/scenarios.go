package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
	"github.com/acp-bridge/acp-bridge/conformance/suite"
)

// runScenarios replays every *.txtar in dir against argv and prints one line
// per scenario, then the differences and offences of those that failed.
func runScenarios(ctx context.Context, dir string, update bool, argv []string, schema *acpschema.Schema, stdout, stderr io.Writer) int {
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		fmt.Fprintf(stderr, "acp-conform: no *.txtar scenarios in %s\n", dir)
		return 2
	}
	sort.Strings(files)
	failed := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "acp-conform: %v\n", err)
			return 2
		}
		a := suite.ParseArchive(data)
		name := filepath.Base(path)
		res, err := suite.RunScenario(ctx, name, a, argv, schema, update)
		if err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL  %s\n      %v\n", name, err)
			continue
		}
		if res.Updated {
			if err := os.WriteFile(path, a.Format(), 0o644); err != nil {
				fmt.Fprintf(stderr, "acp-conform: %v\n", err)
				return 2
			}
		}
		switch {
		case res.OK() && res.Updated:
			fmt.Fprintf(stdout, "UPDATED  %s\n", name)
		case res.OK():
			fmt.Fprintf(stdout, "PASS  %s\n", name)
		default:
			failed++
			fmt.Fprintf(stdout, "FAIL  %s\n", name)
			if res.Diff != "" {
				fmt.Fprintf(stdout, "      agent output differs from the golden (-want +got):\n%s", indent(res.Diff))
			}
			for _, o := range res.Offences {
				fmt.Fprintf(stdout, "      - [#%d] %s\n        %s\n", o.Seq, o.Why, o.Message)
			}
		}
	}
	fmt.Fprintf(stdout, "\n%d scenarios, %d failed\n", len(files), failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func indent(s string) string {
	out := ""
	for _, l := range splitLines(s) {
		out += "      " + l + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
