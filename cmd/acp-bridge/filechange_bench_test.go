package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkBinaryFileChange times write and edit as an editor's user meets
// them: the release build started fresh over its real stdin and stdout, a
// session in a workspace, one prompt whose scripted model reads the file
// and then changes it. Reported, medians: the change's card, from its
// tool_call_update in_progress to its completed (change-ms), the load
// average at the start and end. With ACP_BRIDGE_COMPARE_BIN (another
// build, say of the commit before a change), each iteration runs both, in
// alternating order, and adds its card (other-ms) and the median of the
// per-iteration ratios (x-other); a case the other build refuses (an edit
// only this one lands) is timed for this build alone.
//
//	go test ./cmd/acp-bridge -run '^$' -bench BinaryFileChange -benchtime 15x
func BenchmarkBinaryFileChange(b *testing.B) {
	bins, err := buildStartupBins()
	if err != nil {
		b.Fatal(err)
	}
	bin, other := bins["release"], os.Getenv("ACP_BRIDGE_COMPARE_BIN")
	b.Setenv("ACP_BRIDGE_PERMISSION_MODE", "accept-edits") // no permission prompt: searchOnce answers none
	// A 10,000-line Go file, tab-indented, 1,666 functions of six lines.
	var src strings.Builder
	for i := range 1666 {
		fmt.Fprintf(&src, "func f%04d(x int) int {\n\tif x > %d {\n\t\treturn x * %d\n\t}\n\treturn 0\n}\n", i, i, i)
	}
	big := strings.Repeat("0123456789abcdef", 1<<20/16) // 1 MiB
	cases := []struct {
		name, file, content string // the file the call changes, and its content before
		args                map[string]any
		onlyThis            bool // the other build refuses it
	}{
		{name: "write-new-1MiB", file: "new.txt", args: map[string]any{"content": big}},
		{name: "write-over-1MiB", file: "big.txt", content: big, args: map[string]any{"content": strings.ToUpper(big)}},
		{name: "edit-exact-10k-lines", file: "code.go", content: src.String(),
			args: map[string]any{"old_string": "\t\treturn x * 1000\n", "new_string": "\t\treturn x * 1001\n"}},
		{name: "edit-indentation-10k-lines", file: "code.go", content: src.String(),
			args: map[string]any{"old_string": "if x > 1000 {\n    return x * 1000\n}\n", "new_string": "if x > 1000 {\n    log(x)\n    return x * 1000\n}\n"}},
		{name: "edit-drifted-middle-10k-lines", file: "code.go", content: src.String(), onlyThis: true,
			args: map[string]any{"old_string": "func f1000(x int) int {\n\tif x > 1000 {\n\t\treturn x * 100\n\t}\n\treturn 0\n}\n",
				"new_string": "func f1000(x int) int {\n\tif x > 1000 {\n\t\treturn x * 100\n\t}\n\treturn -1\n}\n"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			load0 := loadAvg()
			dir := b.TempDir()
			work := filepath.Join(dir, "work")
			args := map[string]any{"file_path": c.file}
			for k, v := range c.args {
				args[k] = v
			}
			tool := "write"
			if _, ok := args["old_string"]; ok {
				tool = "edit"
			}
			read, _ := json.Marshal(map[string]any{"file_path": c.file, "limit": 1})
			change, _ := json.Marshal(args)
			calls := []string{fmt.Sprintf(`{"parts":[{"tool_call":{"name":"read","arguments":%s}}]}`, read)}
			if c.content == "" {
				calls[0] = fmt.Sprintf(`{"parts":[{"tool_call":{"name":"glob","arguments":{"pattern":%q}}}]}`, c.file)
			}
			calls = append(calls, fmt.Sprintf(`{"parts":[{"tool_call":{"name":%q,"arguments":%s}}]}`, tool, change), `{"parts":[{"text":"done"}]}`)
			script := filepath.Join(dir, "script.json")
			os.WriteFile(script, []byte(`{"responses":[`+strings.Join(calls, ",")+`]}`), 0o644)
			once := func(bin string) time.Duration {
				os.RemoveAll(work)
				os.MkdirAll(work, 0o755)
				if c.content != "" {
					os.WriteFile(filepath.Join(work, c.file), []byte(c.content), 0o644)
				}
				return searchOnce(b, bin, dir, script, work).cards[1]
			}
			var this, that []time.Duration
			i := 0
			for b.Loop() {
				if other != "" && !c.onlyThis && i%2 == 0 {
					that = append(that, once(other))
				}
				this = append(this, once(bin))
				if other != "" && !c.onlyThis && i%2 == 1 {
					that = append(that, once(other))
				}
				i++
			}
			b.ReportMetric(msOf(this), "change-ms")
			if len(that) > 0 {
				b.ReportMetric(msOf(that), "other-ms")
				b.ReportMetric(medianRatio(this, that), "x-other")
			}
			b.ReportMetric(load0, "load-start")
			b.ReportMetric(loadAvg(), "load-end")
		})
	}
}
