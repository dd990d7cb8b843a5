package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/registry"
)

func TestRunResults(t *testing.T) {
	cases := []struct {
		name, code string
		logs       []string
		result     string // JSON; "" for none
		text       string
	}{
		{"return", `return 1 + 1`, nil, `2`, "2"},
		{"top-level await", `const v = await Promise.resolve(20); return v + 1`, nil, `21`, "21"},
		{"string value raw", `return "line one\nline two"`, nil, `"line one\nline two"`, "line one\nline two"},
		{"object value indented", `return {a: [1, "x"], b: null}`, nil, `{"a":[1,"x"],"b":null}`, "{\n  \"a\": [\n    1,\n    \"x\"\n  ],\n  \"b\": null\n}"},
		{"types stripped", `interface P { x: number }; const p: P = {x: 3}; return p.x as number`, nil, `3`, "3"},
		{"no output", `const x = 1`, nil, "", NoOutput},
		{"console methods in order", `console.log("a", 1, true); console.info({k: "v"}); console.warn([1,2]); console.error(new Error("bad")); console.debug(undefined, null)`,
			[]string{"a 1 true", `{"k":"v"}`, "[1,2]", "Error: bad", "undefined null"}, "",
			"a 1 true\n{\"k\":\"v\"}\n[1,2]\nError: bad\nundefined null"},
		{"logs then value", `console.log("checked"); return "ok"`, []string{"checked"}, `"ok"`, "checked\nok"},
		{"tool value", `const r = await tools.echo({v: {n: 1}}); return r.n`, nil, `1`, "1"},
		{"exotic names", `const a = await tools["my-tool"]({v: 1}); const b = await tools["__proto__"]({v: 2}); return [a, b, Object.getPrototypeOf(tools) === null, typeof tools.toString]`,
			nil, `[1,2,true,"undefined"]`, ""},
		{"failed call is ToolCallError", `try { await tools.fail({}) } catch (e) { return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message] }`,
			nil, `[true,true,"ToolCallError","fail","the file does not exist"]`, ""},
		{"panicking tool rejects its call only", `try { await tools.boom({}) } catch (e) { return e.toolName + ": " + e.message }`,
			nil, `"boom: tool \"boom\" crashed: kaboom"`, ""},
		{"no argument means no arguments", `return await tools.echo()`, nil, `null`, "null"},
		{"for await lowered", `async function* g() { yield 1; yield 2 } let s = 0; for await (const x of g()) s += x; return s`, nil, `3`, "3"},
		{"large and small numbers", `return [1e21, 1.5e-7, 0.1, 123456789, -5]`, nil, `[1e+21,1.5e-7,0.1,123456789,-5]`, ""},
		{"null prototype object returns", `const o = Object.create(null); o.a = 1; return o`, nil, `{"a":1}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err, _ := runCode(t, Limits{}, c.code)
			if err != nil {
				t.Fatalf("run failed: %v", err)
			}
			if strings.Join(out.Logs, "|") != strings.Join(c.logs, "|") {
				t.Errorf("logs = %q, want %q", out.Logs, c.logs)
			}
			if string(out.Result) != c.result {
				t.Errorf("result = %s, want %s", out.Result, c.result)
			}
			if c.text != "" && out.Text() != c.text {
				t.Errorf("text = %q, want %q", out.Text(), c.text)
			}
		})
	}
}

// A value that does not survive JSON rejects that one call, before it gets
// a sub-id or a card; the program goes on.
func TestLossyArgumentsRejectTheCall(t *testing.T) {
	cases := []struct{ arg, why string }{
		{`{v: undefined}`, "arguments.v is undefined"},
		{`{v: NaN}`, "arguments.v is NaN"},
		{`{v: Infinity}`, "arguments.v is Infinity"},
		{`{v: -0}`, "arguments.v is -0"},
		{`{v: 10n}`, "arguments.v is a BigInt"},
		{`{v: [1, , 3]}`, "arguments.v is a sparse array"},
		{`(() => { const o = {}; o.self = o; return {v: o} })()`, "arguments.v.self is a cycle"},
		{`{v: new Date(0)}`, "arguments.v is a Date object"},
		{`{v: new Map()}`, "arguments.v is a Map instance"},
		{`{v: () => 1}`, "arguments.v is a function"},
		{`{v: Symbol("s")}`, "arguments.v is a symbol"},
		{`{v: "\uD800"}`, "arguments.v is a string with a lone surrogate"},
		{`{v: new (class Point { x = 1 })()}`, "arguments.v is a Point instance"},
		{`{["a-b"]: {c: [undefined]}}`, `arguments["a-b"].c[0] is undefined`},
		{`undefined`, "arguments is undefined"},
		{`Object.defineProperty({}, "h", {value: 1})`, "arguments has non-enumerable properties"},
		{`{get v() { throw new Error("no") }}`, "reading arguments threw Error: no"},
	}
	for _, c := range cases {
		t.Run(c.arg, func(t *testing.T) {
			code := `let msg; try { await tools.echo(` + c.arg + `) } catch (e) { msg = e.name + "|" + e.toolName + "|" + e.message }
				const ok = await tools.echo({v: "after"}); return [msg, ok]`
			out, err, h := runCode(t, Limits{}, code)
			if err != nil {
				t.Fatalf("run failed: %v", err)
			}
			var got []string
			if err := json.Unmarshal(out.Result, &got); err != nil || len(got) != 2 {
				t.Fatalf("result = %s", out.Result)
			}
			want := "ToolCallError|echo|arguments must be lossless JSON: " + c.why
			if !strings.HasPrefix(got[0], want) || got[1] != "after" {
				t.Errorf("result = %q\nwant the message to start with %q", got, want)
			}
			// Only the good call ran, and it is sub-call 1.
			if ev := h.log(); len(ev) != 2 || !strings.HasPrefix(ev[0], "start call_1:code:1 echo ") {
				t.Errorf("events = %q", ev)
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	cases := []struct {
		name   string
		limits Limits
		code   string
		kind   FailureKind
		msg    string // a substring of the message
		logs   []string
	}{
		{"throw", Limits{}, `console.log("before"); throw new TypeError("boom")`, FailException, "TypeError: boom", []string{"before"}},
		{"throw a value", Limits{}, `throw {code: 7}`, FailException, `{"code":7}`, nil},
		{"reference error", Limits{}, `return missing + 1`, FailException, "ReferenceError: missing is not defined", nil},
		{"syntax error", Limits{}, "const = 1", FailException, "program.ts:1:", nil},
		{"uncaught tool failure", Limits{}, `await tools.fail({})`, FailException, "ToolCallError: the file does not exist", nil},
		{"never settles", Limits{}, `await new Promise(() => {})`, FailException, "nothing can settle", nil},
		{"compute budget", Limits{Compute: 50 * time.Millisecond}, `console.log("spin"); for (;;) {}`, FailTimeout, "compute budget of 50ms", []string{"spin"}},
		{"wall clock", Limits{Wall: 100 * time.Millisecond}, `await tools.block({})`, FailTimeout, "wall-clock limit of 100ms", nil},
		// The output-limit failure keeps the captured logs (seed §4.6): the
		// lines up to the one that crossed the bound.
		{"log output limit", Limits{MaxOutputBytes: 200}, `for (;;) console.log("0123456789")`, FailOutputLimit, "exceeds the limit of 200 bytes", slices.Repeat([]string{"0123456789"}, 16)},
		{"value output limit", Limits{MaxOutputBytes: 200}, `console.log("small"); return "x".repeat(300)`, FailOutputLimit, "exceeds the limit of 200 bytes", []string{"small"}},
		{"invalid output: function", Limits{}, `return () => 1`, FailInvalidOutput, "the returned value is a function", nil},
		{"invalid output: undefined inside", Limits{}, `return {a: [1, undefined]}`, FailInvalidOutput, "the returned value.a[1] is undefined", nil},
		{"invalid output: NaN", Limits{}, `return 0 / 0`, FailInvalidOutput, "the returned value is NaN", nil},
		{"runaway recursion", Limits{}, `function f(n) { return f(n + 1) + 1 } return f(0)`, FailException, "RangeError", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err, _ := runCode(t, c.limits, c.code)
			var re *RunError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RunError", err)
			}
			if re.Kind != c.kind || !strings.Contains(re.Message, c.msg) {
				t.Errorf("got (%s) %q, want (%s) containing %q", re.Kind, re.Message, c.kind, c.msg)
			}
			if strings.Join(re.Logs, "|") != strings.Join(c.logs, "|") {
				t.Errorf("logs = %q, want %q", re.Logs, c.logs)
			}
		})
	}
}

func TestFailureText(t *testing.T) {
	cases := []struct {
		err  RunError
		want string
	}{
		{RunError{Kind: FailException, Message: "Error: x"}, "Error: code run failed (exception): Error: x"},
		{RunError{Kind: FailTimeout, Message: "slow", Logs: []string{"a", "b"}}, "Error: code run failed (timeout): slow\nCaptured output:\na\nb"},
	}
	for _, c := range cases {
		r := c.err.Result()
		if r.Text() != c.want || !r.IsError || r.Code != CodeRunFailed {
			t.Errorf("result = %+v, want text %q", r, c.want)
		}
	}
}

func TestAbortMidRun(t *testing.T) {
	h := newRecorder(testRegistry(t))
	r := NewRunner(nil)
	ctx, cancel := context.WithCancel(t.Context())
	h.OnStart = func(c *registry.Call) {
		h.add("start " + c.ID)
		if c.Name == "block" {
			cancel() // the user cancels while the program waits on the call
		}
	}
	_, err := r.Run(ctx, &registry.Call{ID: "p"}, `console.log("go"); await tools.block({})`, h)
	var re *RunError
	if !errors.As(err, &re) || re.Kind != FailAbort {
		t.Fatalf("err = %v, want an abort", err)
	}
	if got := re.Error(); got != "code run failed (abort): the run was cancelled\nCaptured output:\ngo" {
		t.Errorf("text = %q", got)
	}
	// The in-flight call was cancelled and drained before Run returned.
	if ev := h.log(); len(ev) != 2 || ev[1] != "end p:code:1 block error=true" {
		t.Errorf("events = %q", ev)
	}
}

// A program that returns without awaiting its calls: in-flight ones are
// cancelled and drained, queued ones abandoned, before Run returns.
func TestSettlingDrainsSubCalls(t *testing.T) {
	out, err, h := runCode(t, Limits{}, `tools.block({}); tools.sleep({v: 1000}); return "done"`)
	if err != nil || string(out.Result) != `"done"` {
		t.Fatalf("out = %+v, err = %v", out, err)
	}
	ev := h.log()
	for _, e := range ev {
		if strings.HasPrefix(e, "start p") {
			t.Errorf("unexpected %q", e)
		}
	}
	// block may or may not have started before the program settled; if it
	// did, its end is recorded; the exclusive sleep never starts after the
	// run is over.
	starts, ends := 0, 0
	for _, e := range ev {
		switch {
		case strings.HasPrefix(e, "start "):
			starts++
			if strings.Contains(e, " sleep ") {
				t.Errorf("queued call started after the run settled: %q", e)
			}
		case strings.HasPrefix(e, "end "):
			ends++
		}
	}
	if starts != ends {
		t.Errorf("started %d calls but %d ended: %q", starts, ends, ev)
	}
}

// A panicking host fails the one call, not the run.
func TestPanickingHost(t *testing.T) {
	h := newRecorder(testRegistry(t))
	h.OnResult = func(c *registry.Call, _ registry.Result) {
		if c.Name == "echo" {
			panic("host exploded")
		}
	}
	out, err := NewRunner(nil).Run(t.Context(), &registry.Call{ID: "p"},
		`try { await tools.echo({v: 1}) } catch (e) { return e.name + ": " + e.message }`, h)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"ToolCallError: tool \"echo\" crashed: host exploded"`; string(out.Result) != want {
		t.Errorf("result = %s, want %s", out.Result, want)
	}
}

// A Values that panics or returns bad JSON rejects the call.
func TestBadValues(t *testing.T) {
	h := newRecorder(testRegistry(t))
	r := NewRunner(&Options{Values: badValues{}})
	out, err := r.Run(t.Context(), &registry.Call{ID: "p"},
		`const m = []; for (const v of [1, 2]) { try { await tools.echo({v}) } catch (e) { m.push(e.message) } } return m`, h)
	if err != nil {
		t.Fatal(err)
	}
	want := `["the result is not JSON: converting it panicked: no value","the result is not JSON: invalid JSON"]`
	if string(out.Result) != want {
		t.Errorf("result = %s\nwant     %s", out.Result, want)
	}
}

type badValues struct{ TextValues }

func (badValues) Value(_ *registry.Def, r registry.Result) (json.RawMessage, error) {
	if r.Text() == "1" {
		panic("no value")
	}
	return []byte("{not json"), nil
}

// Images of successful sub-results are attached after the run's text.
func TestImagesAttached(t *testing.T) {
	reg := registry.New()
	registry.MustAdd(reg, registry.Tool[echoArgs, string]{Name: "shot",
		Run: func(context.Context, *registry.Call, echoArgs) (string, error) { return "ok", nil },
		Render: func(echoArgs, string) []registry.Content {
			return []registry.Content{registry.Text("ok"), {Type: "image", Data: "AAAA", MimeType: "image/png"}}
		}})
	h := newRecorder(reg)
	out, err := NewRunner(nil).Run(t.Context(), &registry.Call{ID: "p"}, `return await tools.shot({})`, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Images) != 1 || out.Images[0].Data != "AAAA" {
		t.Errorf("images = %+v", out.Images)
	}
}

// A getter that calls a tool while its own call's arguments are being
// snapshotted gets a consistent snapshot on both calls.
func TestReentrantSnapshot(t *testing.T) {
	out, err, h := runCode(t, Limits{}, `const inner = []; const arg = {a: 1, get b() { inner.push(tools.echo({v: "inner"})); return 2 }, c: 3};
		const outer = await tools.echo({v: arg}); return [outer, await inner[0]]`)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Result) != `[{"a":1,"b":2,"c":3},"inner"]` {
		t.Errorf("result = %s (events %q)", out.Result, h.log())
	}
}
