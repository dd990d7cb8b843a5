// An independent ACP client: the official TypeScript SDK drives acp-bridge
// (argv: the bridge command) through one scenario, given as JSON in
// $SCENARIO, and writes what it saw as JSON to $OUT:
//   {lines: [{dir: "in"|"out", line}], sessions: {id: [update...]},
//    responses: {name: result}, errors: {name: message}}
// "in" is agent→client. The Go test (tsclient_test.go) asserts on it.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { writeFileSync } from "node:fs";
import { client, ndJsonStream } from "@agentclientprotocol/sdk/unstable";

const scenario = JSON.parse(process.env.SCENARIO);
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const seen = { lines: [], sessions: {}, responses: {}, errors: {} };

// Tap both directions line by line, as the bytes went.
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
// Closing the bridge's stdin at the end aborts this pipe: that is the end.
toAgentTap.readable.pipeTo(Writable.toWeb(child.stdin)).catch(() => {});
const stream = ndJsonStream(toAgentTap.writable, fromAgent);

const app = client({ name: "acp-bridge-tsclient-check" })
  .onNotification("session/update", ({ params }) => {
    (seen.sessions[params.sessionId] ??= []).push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
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

try {
  await app.connectWith(stream, async (ctx) => {
    const init = await call(ctx, "initialize", "initialize", {
      protocolVersion: 1,
      clientCapabilities: scenario.clientCapabilities,
      clientInfo: { name: "tsclient-check", version: "1" },
    });
    const caps = init?.agentCapabilities?.sessionCapabilities ?? {};
    const req = { cwd: scenario.cwd, mcpServers: [] };
    if (scenario.systemPrompt && caps.systemPrompt) {
      req.systemPrompt = { mode: "append", content: text(scenario.systemPrompt) };
    }
    const s = await call(ctx, "new", "session/new", req);
    if (!s) return;
    await call(ctx, "prompt", "session/prompt", { sessionId: s.sessionId, prompt: text(scenario.prompt) });
    if (scenario.forkPrompt && caps.fork) {
      const f = await call(ctx, "fork", "session/fork", { sessionId: s.sessionId, cwd: scenario.cwd, mcpServers: [] });
      if (f) {
        await call(ctx, "forkPrompt", "session/prompt", { sessionId: f.sessionId, prompt: text(scenario.forkPrompt) });
      }
    }
  });
} catch (e) {
  seen.errors.connection = String(e?.stack ?? e);
} finally {
  child.stdin.end();
  await new Promise((r) => child.once("exit", r));
  writeFileSync(process.env.OUT, JSON.stringify(seen));
}
