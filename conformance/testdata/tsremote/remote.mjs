// An independent remote ACP client: the official TypeScript SDK's
// Streamable HTTP client (createHttpStream) or its WebSocket client
// (createWebSocketStream, over the ws package) drives `acp-bridge serve`
// through one session, then reconnects and loads it. The scenario is JSON
// in $SCENARIO ({url, token, transport: "http"|"ws", cwd}); what it saw
// goes to $OUT as JSON:
//   {updates: [update...], reloaded: [update...], responses: {name: result},
//    errors: {name: message}, permissions: n}
// The Go test (tsremote_test.go) asserts on it.
import { writeFileSync } from "node:fs";
import WebSocket from "ws";
import { client } from "@agentclientprotocol/sdk/unstable";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const sc = JSON.parse(process.env.SCENARIO);
const seen = { updates: [], reloaded: [], responses: {}, errors: {}, permissions: 0 };
let sink = seen.updates;

const headers = { Authorization: `Bearer ${sc.token}` };
const connect = () =>
  sc.transport === "ws"
    ? createWebSocketStream(sc.url.replace(/^http/, "ws"), { WebSocket, headers })
    : createHttpStream(sc.url, { headers });

const app = client({ name: "acp-bridge-tsremote-check" })
  .onNotification("session/update", ({ params }) => {
    sink.push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    seen.permissions++;
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
const init = (ctx, name) =>
  call(ctx, name, "initialize", {
    protocolVersion: 1,
    clientCapabilities: {},
    clientInfo: { name: "tsremote-check", version: "1" },
  });

// until polls cond every 10 ms for at most 30 s (a bound for "never").
const until = async (what, cond) => {
  const end = Date.now() + 30000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`no ${what} within 30 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

let sessionId;
try {
  await app.connectWith(connect(), async (ctx) => {
    await init(ctx, "initialize");
    const s = await call(ctx, "new", "session/new", { cwd: sc.cwd, mcpServers: [] });
    if (!s) return;
    sessionId = s.sessionId;
    await call(ctx, "outside", "session/new", { cwd: "/", mcpServers: [] });
    await call(ctx, "run", "session/prompt", { sessionId, prompt: text("run the command") });
    await call(ctx, "edit", "session/prompt", { sessionId, prompt: text("edit the notes") });
    // Cancel a turn once its first words have arrived.
    const slow = call(ctx, "cancelled", "session/prompt", { sessionId, prompt: text("wait for cancel") });
    await until("first chunk of the slow turn", () =>
      seen.updates.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.text?.includes("Working")),
    );
    await ctx.notify("session/cancel", { sessionId });
    await slow;
    await call(ctx, "list", "session/list", { cwd: sc.cwd });
    await call(ctx, "close", "session/close", { sessionId });
  });
  // A new connection: initialize again, load the session back.
  sink = seen.reloaded;
  await app.connectWith(connect(), async (ctx) => {
    await init(ctx, "reinitialize");
    await call(ctx, "load", "session/load", { sessionId, cwd: sc.cwd, mcpServers: [] });
  });
} catch (e) {
  seen.errors.connection = String(e?.stack ?? e);
} finally {
  writeFileSync(process.env.OUT, JSON.stringify(seen));
}
