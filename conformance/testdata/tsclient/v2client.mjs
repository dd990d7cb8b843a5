// The official TypeScript SDK's experimental ACP v2 client
// (@agentclientprotocol/sdk/experimental/v2) drives acp-bridge (argv: the
// bridge command) through one phase of a session, given as JSON in
// $SCENARIO, and writes what it saw as JSON to $OUT:
//   {lines: [{dir: "in"|"out", line}], updates: [update...],
//    responses: {name: result}, errors: {name: message}, permissions: [params]}
// Phase "first": initialize (v2), session/new, a prompt whose command asks
// permission and runs, a prompt cancelled while its command runs, list,
// close. Phase "resume": initialize, session/resume from $SCENARIO.cursor.
// The Go test (tsv2_test.go) asserts on the result.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { writeFileSync } from "node:fs";
import { client, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2";

const scenario = JSON.parse(process.env.SCENARIO);
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const seen = { lines: [], updates: [], responses: {}, errors: {}, permissions: [] };

const tap = (dir) => {
  let buf = "";
  return new TransformStream({
    transform(chunk, ctl) {
      buf += new TextDecoder().decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        seen.lines.push({ dir, line: buf.slice(0, i) });
        buf = buf.slice(i + 1);
      }
      ctl.enqueue(chunk);
    },
  });
};
const fromAgent = Readable.toWeb(child.stdout).pipeThrough(tap("in"));
const toAgentTap = tap("out");
toAgentTap.readable.pipeTo(Writable.toWeb(child.stdin)).catch(() => {});
const stream = ndJsonStream(toAgentTap.writable, fromAgent);

// Updates in arrival order; waitFor resolves once one from index `from` on
// satisfies pred, with the index after it.
let waiters = [];
const waitFor = (from, pred) =>
  new Promise((resolve) => {
    const check = () => {
      for (let i = from; i < seen.updates.length; i++) {
        if (pred(seen.updates[i])) {
          resolve(i + 1);
          return true;
        }
      }
      return false;
    };
    if (!check()) waiters.push(check);
  });

const app = client({ name: "acp-bridge-tsv2-check" })
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params.update);
    waiters = waiters.filter((w) => !w());
  })
  .onRequest("session/request_permission", ({ params }) => {
    seen.permissions.push(params);
    const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

const text = (t) => [{ type: "text", text: t }];
const call = async (ctx, name, method, params) => {
  try {
    const r = await ctx.request(method, params);
    seen.responses[name] = r ?? {};
    return r;
  } catch (e) {
    seen.errors[name] = String(e?.message ?? e);
    return undefined;
  }
};
const idle = (stop) => (u) => u.sessionUpdate === "state_update" && u.state === "idle" && u.stopReason === stop;

try {
  await app.connectWith(stream, async (ctx) => {
    await call(ctx, "initialize", "initialize", {
      protocolVersion: 2,
      info: { name: "tsv2-check", version: "1" },
      capabilities: {},
    });
    if (scenario.phase === "resume") {
      seen.before = seen.updates.length;
      await call(ctx, "resume", "session/resume", {
        sessionId: scenario.sessionId, cwd: scenario.cwd, replayFrom: scenario.cursor,
      });
      seen.atResume = seen.updates.length;
      return;
    }
    const s = await call(ctx, "new", "session/new", { cwd: scenario.cwd });
    if (!s) return;
    await call(ctx, "prompt", "session/prompt", { sessionId: s.sessionId, prompt: text("list it") });
    const end = await waitFor(0, idle("end_turn"));
    await call(ctx, "prompt2", "session/prompt", { sessionId: s.sessionId, prompt: text("wait") });
    const at = await waitFor(end, (u) => u.sessionUpdate === "terminal_output_chunk");
    await ctx.notify("session/cancel", { sessionId: s.sessionId });
    await waitFor(at, idle("cancelled"));
    await call(ctx, "list", "session/list", {});
    await call(ctx, "close", "session/close", { sessionId: s.sessionId });
  });
} catch (e) {
  seen.errors.connection = String(e?.stack ?? e);
} finally {
  child.stdin.end();
  await new Promise((r) => child.once("exit", r));
  writeFileSync(process.env.OUT, JSON.stringify(seen));
}
