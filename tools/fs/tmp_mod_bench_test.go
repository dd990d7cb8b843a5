package fs_test

import (
	"os"
	"strings"
	"testing"

	"github.com/acp-bridge/acp-bridge/pipeline"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/tools/fs"
)

func BenchmarkTmpMod(b *testing.B) {
	dir := os.Getenv("TREE")
	tool := os.Getenv("TOOL")
	args := os.Getenv("ARGS")
	r := registry.New()
	fs.Register(r)
	d := r.NewScope().Get(tool)
	p := pipeline.New(nil)
	b.ReportAllocs()
	for b.Loop() {
		res := p.Execute(b.Context(), d, &registry.Call{Name: tool, Args: []byte(args), Cwd: dir, Roots: []string{dir}})
		if res.IsError || strings.HasPrefix(res.Text(), "zzz") {
			b.Fatalf("%s", res.Text())
		}
	}
}
