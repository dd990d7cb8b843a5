package codemode

import (
	"fmt"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// The program is the body of an async function. Wrapping it before the
// transform makes top-level await and return legal for esbuild and goja
// alike; the wrapper's own line shifts line numbers by one, which strip
// corrects in its messages.
const (
	wrapOpen  = "(async function () {\n"
	wrapClose = "\n})"
)

// strip turns a TypeScript function body into a JavaScript expression that
// evaluates to the async function. ES2017 is the target because goja runs
// async functions natively but not for-await or async generators, which
// esbuild lowers at that target.
func strip(code string) (string, error) {
	res := api.Transform(wrapOpen+code+wrapClose, api.TransformOptions{
		Loader:     api.LoaderTS,
		Target:     api.ES2017,
		Sourcefile: "program.ts",
		LogLevel:   api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		msgs := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			msgs = append(msgs, position(m.Location)+m.Text)
		}
		return "", fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return string(res.Code), nil
}

func position(l *api.Location) string {
	if l == nil {
		return ""
	}
	line := l.Line - 1 // the wrapper's first line
	if line < 1 {
		line = 1
	}
	return fmt.Sprintf("program.ts:%d:%d: ", line, l.Column+1)
}
