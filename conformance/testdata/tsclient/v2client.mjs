// The official TypeScript SDK's experimental ACP v2 client
// (@agentclientprotocol/sdk/experimental/v2) drives acp-bridge through one
// phase of a session ($SCENARIO) and reports (bridge.mjs) what it saw,
// with updates: [update...] in arrival order, permissions: [params], and
// for a resume before and atResume (the number of updates before the
// request and at its answer).
// Phase "first": initialize (v2), session/new, a prompt whose command asks
// permission and runs, a prompt cancelled while its command runs, list,
// close. Phase "resume": initialize, session/resume from scenario.cursor.
// The Go test (tsv2_test.go) asserts on the result.
import { client, ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2";
import { scenario, report, text, runBridge, call, allowOnce, finish } from "./bridge.mjs";

report.updates = [];
report.permissions = [];

// waitFor resolves once an update from index `from` on satisfies pred,
// with the index after it.
let waiters = [];
const waitFor = (from, pred) =>
  new Promise((resolve) => {
    const check = () => {
      for (let i = from; i < report.updates.length; i++) {
        if (pred(report.updates[i])) {
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
    report.updates.push(params.update);
    waiters = waiters.filter((w) => !w());
  })
  .onRequest("session/request_permission", (req) => {
    report.permissions.push(req.params);
    return allowOnce(req);
  });

const idle = (stop) => (u) => u.sessionUpdate === "state_update" && u.state === "idle" && u.stopReason === stop;

await finish(() =>
  runBridge(ndJsonStream, (stream) =>
    app.connectWith(stream, async (ctx) => {
      await call(ctx, "initialize", "initialize", {
        protocolVersion: 2,
        info: { name: "tsv2-check", version: "1" },
        capabilities: {},
      });
      if (scenario.phase === "resume") {
        report.before = report.updates.length;
        await call(ctx, "resume", "session/resume", {
          sessionId: scenario.sessionId, cwd: scenario.cwd, replayFrom: scenario.cursor,
        });
        report.atResume = report.updates.length;
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
    }),
  ),
);
