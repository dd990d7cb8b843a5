// An independent ACP client: the official TypeScript SDK drives acp-bridge
// through one scenario ($SCENARIO) and reports (bridge.mjs) what it saw,
// with sessions: {id: [update...]}. The Go test (tsclient_test.go) asserts
// on it.
import { client, ndJsonStream } from "@agentclientprotocol/sdk/unstable";
import { scenario, report, text, runBridge, call, allowOnce, finish } from "./bridge.mjs";

report.sessions = {};
const app = client({ name: "acp-bridge-tsclient-check" })
  .onNotification("session/update", ({ params }) => {
    (report.sessions[params.sessionId] ??= []).push(params.update);
  })
  .onRequest("session/request_permission", allowOnce);

await finish(() =>
  runBridge(ndJsonStream, (stream) =>
    app.connectWith(stream, async (ctx) => {
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
    }),
  ),
);
