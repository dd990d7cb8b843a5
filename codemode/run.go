package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/acp-bridge/acp-bridge/registry"
)

// maxCallStack bounds JavaScript recursion: a runaway recursion becomes a
// RangeError in the program instead of growing the host's stack.
const maxCallStack = 4096

// stop is the value a run is interrupted with; it says which limit ended it.
type stop struct {
	kind FailureKind
	msg  string
}

// Run executes one program: code is the body of an async TypeScript
// function, parent is the run_code call (its ID prefixes the sub-ids; its
// Cwd, Roots and Files carry over to sub-calls). A failed run returns a
// *RunError; every sub-call has finished, and its events landed, when Run returns.
func (r *Runner) Run(ctx context.Context, parent *registry.Call, code string, host Host) (Output, error) {
	if r.limits.MaxParallel < 0 {
		return Output{}, &RunError{Kind: FailException, Message: fmt.Sprintf("the runner's MaxParallel is %d; it must be positive", r.limits.MaxParallel)}
	}
	js, err := strip(code)
	if err != nil {
		return Output{}, &RunError{Kind: FailException, Message: err.Error()}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rn := &run{r: r, ctx: ctx, cancel: cancel, host: host, wake: make(chan struct{}, 1)}
	rn.bridge = newBridge(rctx, host, parent, r.limits.MaxParallel, r.log, rn.signal)
	out, rerr := rn.execute(js)
	rn.over.Store(true)
	// The run is over: cancel in-flight sub-calls, abandon queued ones, and
	// wait for them, so nothing of this run happens after it returns.
	cancel()
	reason := "completed"
	if rerr != nil {
		reason = string(rerr.Kind)
	}
	rn.bridge.drain(reason)
	if rerr != nil {
		return Output{}, rerr
	}
	rn.imgMu.Lock()
	out.Images = rn.images
	rn.imgMu.Unlock()
	return out, nil
}

// run is the state of one execution. Everything but the inbox and the
// images belongs to the goroutine running the loop, which owns the runtime.
type run struct {
	r      *Runner
	ctx    context.Context    // the caller's: cancelled means abort
	cancel context.CancelFunc // cancels the sub-calls' context
	host   Host
	bridge *bridge
	vm     *goja.Runtime

	mu    sync.Mutex
	inbox []func() error // settlements posted by finished sub-calls
	wake  chan struct{}

	imgMu  sync.Mutex
	images []registry.Content

	over        atomic.Bool // the program settled: late results are discarded
	pending     int         // binding promises not settled yet
	logs        []string
	outBytes    int // JSON size of the logs array so far
	computeLeft time.Duration
	compute     *time.Timer

	toolCallError goja.Constructor
	jsonParse     goja.Callable
	jsonStringify goja.Callable
	errorProto    *goja.Object
	exp           exporter
	exporting     bool // exp is in use (a getter may call a tool mid-export)
}

func (rn *run) execute(js string) (Output, *RunError) {
	prg, err := goja.Compile("program.js", js, false)
	if err != nil {
		return Output{}, &RunError{Kind: FailException, Message: err.Error()}
	}
	if err := rn.setup(); err != nil {
		return Output{}, &RunError{Kind: FailException, Message: "setting up the runtime: " + err.Error()}
	}
	vm := rn.vm
	rn.computeLeft = rn.r.limits.Compute
	rn.compute = time.AfterFunc(time.Hour, func() {
		vm.Interrupt(&stop{FailTimeout, fmt.Sprintf("the program used its compute budget of %s", rn.r.limits.Compute)})
	})
	rn.compute.Stop()
	wall := make(chan struct{})
	wallStop := &stop{FailTimeout, fmt.Sprintf("the program ran past its wall-clock limit of %s", rn.r.limits.Wall)}
	// The wall clock also cancels the sub-calls, which may be what the
	// program (or the loop, running an exclusive call) is waiting on.
	// wall closes first: whatever the cancellation then causes (a sub-call
	// rejected as aborted) is seen after the limit, which outranks it.
	wt := time.AfterFunc(rn.r.limits.Wall, func() { close(wall); vm.Interrupt(wallStop); rn.cancel() })
	defer wt.Stop()
	abortStop := &stop{FailAbort, "the run was cancelled"}
	unhook := context.AfterFunc(rn.ctx, func() { vm.Interrupt(abortStop) })
	defer unhook()

	var promise *goja.Promise
	if err := rn.enter(func() error {
		fn, err := vm.RunProgram(prg)
		if err != nil {
			return err
		}
		call, ok := goja.AssertFunction(fn)
		if !ok {
			return errors.New("the program did not compile to a function")
		}
		p, err := call(goja.Undefined())
		if err != nil {
			return err
		}
		promise, _ = p.Export().(*goja.Promise)
		if promise == nil {
			return errors.New("the program did not return a promise")
		}
		return nil
	}); err != nil {
		return Output{}, rn.fail(err)
	}

	for promise.State() == goja.PromiseStatePending {
		// A limit that fired outranks the work it caused: a sub-call
		// cancelled by the abort must not surface as the program's exception.
		select {
		case <-wall:
			return Output{}, rn.failure(wallStop.kind, wallStop.msg)
		case <-rn.ctx.Done():
			return Output{}, rn.failure(abortStop.kind, abortStop.msg)
		default:
		}
		if work := rn.take(); len(work) > 0 {
			for _, f := range work {
				if err := rn.enter(f); err != nil {
					return Output{}, rn.fail(err)
				}
			}
			continue
		}
		if rn.bridge.pump() {
			continue
		}
		if rn.pending == 0 {
			return Output{}, rn.failure(FailException, "the program awaits a promise that nothing can settle "+
				"(only tool calls settle promises here; there are no timers)")
		}
		select {
		case <-rn.wake:
		case <-wall:
			return Output{}, rn.failure(wallStop.kind, wallStop.msg)
		case <-rn.ctx.Done():
			return Output{}, rn.failure(abortStop.kind, abortStop.msg)
		}
	}

	select {
	case <-wall: // the program settled only because the limit cancelled its calls
		return Output{}, rn.failure(wallStop.kind, wallStop.msg)
	default:
	}
	if rn.ctx.Err() != nil {
		return Output{}, rn.failure(abortStop.kind, abortStop.msg)
	}
	if promise.State() == goja.PromiseStateRejected {
		return Output{}, rn.failure(FailException, rn.describeThrown(promise.Result()))
	}
	out := Output{Logs: rn.logs}
	if v := promise.Result(); v != nil && !goja.IsUndefined(v) {
		var b []byte
		var lossy error
		if err := rn.enter(func() error {
			b, lossy = rn.export(v, "the returned value")
			return nil
		}); err != nil {
			return Output{}, rn.fail(err)
		}
		if lossy != nil {
			return Output{}, rn.failure(FailInvalidOutput, lossy.Error()+"; return lossless JSON (plain objects, arrays, strings, finite numbers, booleans, null)")
		}
		out.Result = append(json.RawMessage(nil), b...)
	}
	if total := rn.outBytes + len(out.Result); total > rn.r.limits.MaxOutputBytes {
		return Output{}, rn.failure(FailOutputLimit, rn.overLimit(total))
	}
	return out, nil
}

// setup builds the runtime: the prelude, the console, the tool bindings.
func (rn *run) setup() error {
	vm := goja.New()
	rn.vm = vm
	vm.SetMaxCallStackSize(maxCallStack)
	v, err := vm.RunProgram(prelude())
	if err != nil {
		return err
	}
	parts := v.(*goja.Object)
	get := func(i int) goja.Value { return parts.Get(fmt.Sprint(i)) }
	var ok bool
	if rn.toolCallError, ok = goja.AssertConstructor(get(0)); !ok {
		return errors.New("ToolCallError is not a constructor")
	}
	rn.jsonParse, _ = goja.AssertFunction(get(1))
	rn.jsonStringify, _ = goja.AssertFunction(get(2))
	rn.exp.objectProto = get(3).(*goja.Object)
	rn.exp.arrayProto = get(4).(*goja.Object)
	rn.errorProto = get(5).(*goja.Object).Get("prototype").(*goja.Object)

	console := vm.NewObject()
	for _, m := range []string{"log", "info", "warn", "error", "debug"} {
		if err := console.Set(m, rn.print); err != nil {
			return err
		}
	}
	if err := vm.Set("console", console); err != nil {
		return err
	}

	// A null-prototype object: a tool named __proto__ or constructor is an
	// ordinary own property, and nothing is inherited.
	tools := vm.NewObject()
	if err := tools.SetPrototype(nil); err != nil {
		return err
	}
	for _, d := range rn.host.Tools() {
		if d == nil || d.Name == ToolName || tools.Get(d.Name) != nil {
			continue
		}
		if err := tools.DefineDataProperty(d.Name, vm.ToValue(rn.binding(d.Name)), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return vm.GlobalObject().DefineDataProperty("tools", tools, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// enter runs f on the runtime, charging its duration to the compute budget
// (time spent waiting for tool calls is not charged). A Go panic escaping
// the runtime fails the run instead of the process.
func (rn *run) enter(f func() error) (err error) {
	if rn.computeLeft <= 0 {
		return &goja.InterruptedError{}
	}
	rn.compute.Reset(rn.computeLeft)
	start := time.Now()
	defer func() {
		fired := !rn.compute.Stop()
		rn.computeLeft -= time.Since(start)
		if fired {
			rn.computeLeft = 0
		}
		if rec := recover(); rec != nil {
			rn.r.log.Error("code mode runtime panicked", "panic", rec, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error: %v", rec)
		}
	}()
	return f()
}

// fail turns an error out of the runtime into the run's failure.
func (rn *run) fail(err error) *RunError {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if s, ok := ie.Value().(*stop); ok {
			return rn.failure(s.kind, s.msg)
		}
		if rn.computeLeft <= 0 {
			return rn.failure(FailTimeout, fmt.Sprintf("the program used its compute budget of %s", rn.r.limits.Compute))
		}
		return rn.failure(FailAbort, "the run was interrupted")
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return rn.failure(FailException, fmt.Sprintf("RangeError: maximum call stack size (%d frames) exceeded", maxCallStack))
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return rn.failure(FailException, rn.describeThrown(ex.Value()))
	}
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		return rn.failure(FailException, se.Error())
	}
	return rn.failure(FailException, err.Error())
}

func (rn *run) failure(kind FailureKind, msg string) *RunError {
	e := &RunError{Kind: kind, Message: msg, Logs: rn.logs}
	// The failure message counts against the output bound like a value would.
	if kind != FailOutputLimit {
		if total := rn.outBytes + len(msg) + 2; total > rn.r.limits.MaxOutputBytes {
			e.Kind, e.Message = FailOutputLimit, rn.overLimit(total)
		}
	}
	return e
}

func (rn *run) overLimit(total int) string {
	return fmt.Sprintf("the program's output (logs plus result, %d bytes as JSON) exceeds the limit of %d bytes", total, rn.r.limits.MaxOutputBytes)
}

// describeThrown renders a thrown value: "Name: message" for errors, the
// string itself, or JSON for other values.
func (rn *run) describeThrown(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if obj, ok := v.(*goja.Object); ok {
		if rn.isError(obj) {
			return obj.String()
		}
		if s, err := rn.jsonStringify(goja.Undefined(), obj); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
	}
	return v.String()
}

func (rn *run) isError(obj *goja.Object) bool {
	for p := obj.Prototype(); p != nil; p = p.Prototype() {
		if p == rn.errorProto {
			return true
		}
	}
	return false
}

// print is console.log and its siblings: the arguments formatted and
// joined by spaces, as one line of the run's output.
func (rn *run) print(call goja.FunctionCall) goja.Value {
	var b strings.Builder
	for i, a := range call.Arguments {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(rn.format(a))
	}
	line := b.String()
	rn.logs = append(rn.logs, line)
	rn.outBytes += jsonStringLen(line) + 1 // the comma or bracket around it
	if rn.outBytes > rn.r.limits.MaxOutputBytes {
		rn.vm.Interrupt(&stop{FailOutputLimit, rn.overLimit(rn.outBytes)})
	}
	return goja.Undefined()
}

func (rn *run) format(v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok {
		return v.String()
	}
	if _, fn := goja.AssertFunction(obj); fn || rn.isError(obj) {
		return obj.String()
	}
	if s, err := rn.jsonStringify(goja.Undefined(), obj); err == nil && !goja.IsUndefined(s) {
		return s.String()
	}
	return obj.String()
}

// binding is tools.<name>: it snapshots the argument as lossless JSON,
// queues the call, and returns a promise the call's outcome settles.
func (rn *run) binding(name string) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		vm := rn.vm
		promise, resolve, reject := vm.NewPromise()
		args := json.RawMessage(`{}`) // a call with no argument means no arguments
		if len(call.Arguments) > 0 {
			b, err := rn.export(call.Argument(0), "arguments")
			if err != nil {
				_ = reject(rn.toolError(name, "arguments must be lossless JSON: "+err.Error()))
				return vm.ToValue(promise)
			}
			args = append(json.RawMessage(nil), b...)
		}
		rn.pending++
		rn.bridge.submit(name, args, func(d *registry.Def, res registry.Result) {
			if rn.over.Load() {
				rn.r.log.Debug("run_code run is over; " + name + " result discarded")
				return
			}
			rn.post(func() error {
				rn.pending--
				return rn.settle(name, d, res, resolve, reject)
			})
		})
		return vm.ToValue(promise)
	}
}

// export snapshots v as lossless JSON. A getter that throws fails the
// snapshot; a getter that calls a tool re-enters export, so the nested call
// gets an exporter of its own instead of clobbering the outer one's state.
func (rn *run) export(v goja.Value, root string) (b []byte, err error) {
	x := &rn.exp
	if rn.exporting {
		x = &exporter{objectProto: rn.exp.objectProto, arrayProto: rn.exp.arrayProto}
	} else {
		rn.exporting = true
		defer func() { rn.exporting = false }()
	}
	if ex := rn.vm.Try(func() { b, err = x.export(v, root) }); ex != nil {
		return nil, errors.New("reading " + root + " threw " + rn.describeThrown(ex.Value()))
	}
	return b, err
}

// settle resolves a binding's promise with the call's value, or rejects it
// with ToolCallError. It runs on the loop; the program continues inside it.
func (rn *run) settle(name string, d *registry.Def, res registry.Result, resolve, reject func(any) error) error {
	if res.IsError {
		return reject(rn.toolError(name, strings.TrimPrefix(res.Text(), "Error: ")))
	}
	raw, err := rn.value(d, res)
	if err != nil {
		return reject(rn.toolError(name, "the result is not JSON: "+err.Error()))
	}
	v, err := rn.fromJSON(raw)
	if err != nil {
		return reject(rn.toolError(name, "the result is not JSON: "+err.Error()))
	}
	var imgs []registry.Content
	for _, c := range res.Content {
		if c.Type == "image" {
			imgs = append(imgs, c)
		}
	}
	if len(imgs) > 0 {
		rn.imgMu.Lock()
		rn.images = append(rn.images, imgs...)
		rn.imgMu.Unlock()
	}
	return resolve(v)
}

// fromJSON turns a JSON value into a JavaScript one. Scalars, the common
// case (text results are strings), skip JSON.parse and its decoder; objects
// and arrays go through the pristine JSON.parse, so key order is kept and
// the program gets ordinary objects, not wrapped Go maps.
func (rn *run) fromJSON(raw json.RawMessage) (goja.Value, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] != '{' && raw[0] != '[' {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return rn.vm.ToValue(v), nil
	}
	return rn.jsonParse(goja.Undefined(), rn.vm.ToValue(string(raw)))
}

func (rn *run) value(d *registry.Def, res registry.Result) (raw json.RawMessage, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			err = fmt.Errorf("converting it panicked: %v", rec)
		}
	}()
	raw, err = rn.r.values.Value(d, res)
	if err == nil && !json.Valid(raw) {
		err = errors.New("invalid JSON")
	}
	return raw, err
}

func (rn *run) toolError(name, msg string) goja.Value {
	obj, err := rn.toolCallError(nil, rn.vm.ToValue(name), rn.vm.ToValue(msg))
	if err != nil {
		return rn.vm.ToValue(msg)
	}
	return obj
}

// post hands work to the loop; safe from any goroutine, never blocks, and
// harmless after the run is over (the work is then dropped).
func (rn *run) post(f func() error) {
	rn.mu.Lock()
	rn.inbox = append(rn.inbox, f)
	rn.mu.Unlock()
	rn.signal()
}

// signal wakes the loop if it waits; safe from any goroutine, never blocks.
func (rn *run) signal() {
	select {
	case rn.wake <- struct{}{}:
	default:
	}
}

func (rn *run) take() []func() error {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	w := rn.inbox
	rn.inbox = nil
	return w
}

// jsonStringLen is the length of s encoded as a JSON string.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}
