package suite

import (
	"fmt"
	"testing"
)

// BenchmarkAnalyze measures the trace-wide checks (schema validation of
// every message included) over a long turn: 200 display-terminal tool
// calls with 10 output chunks each, about 2,400 messages.
func BenchmarkAnalyze(b *testing.B) {
	schema := testSchema(&testing.T{})
	if schema == nil {
		b.Skip("no schema")
	}
	lines := []string{`> {"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, newS}
	for i := range 200 {
		id := fmt.Sprintf("c%d", i)
		lines = append(lines, upd(`{"sessionUpdate":"tool_call","toolCallId":"`+id+`","title":"ls","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"`+id+`"}],"_meta":{"terminal_info":{"terminal_id":"`+id+`","cwd":"/w"}}}`))
		for range 10 {
			lines = append(lines, upd(`{"sessionUpdate":"tool_call_update","toolCallId":"`+id+`","_meta":{"terminal_output":{"terminal_id":"`+id+`","data":"a line of output\n"}}}`))
		}
		lines = append(lines, upd(`{"sessionUpdate":"tool_call_update","toolCallId":"`+id+`","status":"completed","_meta":{"terminal_exit":{"terminal_id":"`+id+`","exit_code":0,"signal":null}}}`))
	}
	es := trace(lines...)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ta := newTally()
		analyze(ta, schema, ZedCaps, es)
		if len(ta.findings) != 0 {
			b.Fatalf("findings: %+v", ta.findings[0])
		}
	}
	b.ReportMetric(float64(len(es)), "msgs/op")
}
