// What every client script here shares (its Go side is
// conformance/tsrun_test.go): the scenario ($SCENARIO, JSON), the report
// written to $OUT, bridge processes (argv: the bridge command) whose stdio
// is tapped line by line as the bytes went, and requests recorded by name.
// A new script imports these, builds its client with the SDK entry point
// it tests, and runs its steps in finish(async () => { ... }).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { writeFileSync } from "node:fs";

export const scenario = JSON.parse(process.env.SCENARIO);
const [cmd, ...args] = process.argv.slice(2);

// report is what the script writes to $OUT:
//   {lines: [{proc, dir: "in"|"out", line}], responses: {name: result},
//    errors: {name: {code, message, data}}}
// "in" is agent→client; proc numbers the bridge processes from 0. A
// script adds fields of its own.
export const report = { lines: [], responses: {}, errors: {} };

export const text = (t) => [{ type: "text", text: t }];

// tap is a stream that passes bytes on and records each whole line of
// them in report.lines, for any transport that sees the bytes.
export function tap(proc, dir) {
  let buf = "";
  const dec = new TextDecoder();
  return new TransformStream({
    transform(chunk, ctl) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        report.lines.push({ proc, dir, line: buf.slice(0, i) });
        buf = buf.slice(i + 1);
      }
      ctl.enqueue(chunk);
    },
  });
}

let procs = 0;

// runBridge starts a bridge process, opens ndJsonStream (the SDK's) over
// its tapped stdio and runs connect(stream), e.g.
// (s) => app.connectWith(s, fn); then it ends the bridge by closing its
// stdin, as an editor that quits. A failure of connect is recorded as
// errors["connection" + proc].
export async function runBridge(ndJsonStream, connect) {
  const proc = procs++;
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((r) => child.once("exit", r));
  const fromAgent = Readable.toWeb(child.stdout).pipeThrough(tap(proc, "in"));
  const toAgent = tap(proc, "out");
  // Closing the bridge's stdin at the end aborts this pipe: that is the end.
  toAgent.readable.pipeTo(Writable.toWeb(child.stdin)).catch(() => {});
  try {
    await connect(ndJsonStream(toAgent.writable, fromAgent));
  } catch (e) {
    report.errors[`connection${proc}`] = { message: String(e?.stack ?? e) };
  } finally {
    child.stdin.end();
    await exited;
  }
}

// call makes one request on the connection ctx and keeps its result (or
// error) in the report under name.
export async function call(ctx, name, method, params, options) {
  try {
    const r = await ctx.request(method, params, options);
    report.responses[name] = r ?? {};
    return r;
  } catch (e) {
    report.errors[name] = { code: e?.code, message: String(e?.message ?? e), data: e?.data };
    return undefined;
  }
}

// allowOnce answers a session/request_permission: allow once.
export function allowOnce({ params }) {
  const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
  return { outcome: { outcome: "selected", optionId: allow.optionId } };
}

// finish runs the script's steps, records their failure as
// errors.scenario, and writes the report to $OUT.
export async function finish(steps) {
  try {
    await steps();
  } catch (e) {
    report.errors.scenario = { message: String(e?.stack ?? e) };
  } finally {
    writeFileSync(process.env.OUT, JSON.stringify(report));
  }
}
