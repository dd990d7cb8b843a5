// The protocol features clients use beyond schema 1.25's basics, driven
// through the official TypeScript SDK (its /unstable entry point) against
// the real acp-bridge binary: steering, $/cancel_request, boolean config
// options, titles and archive, elicitation, providers. argv: the bridge
// command; $SCENARIO (JSON) names the scenario and its inputs; the report
// (bridge.mjs) adds sessions: {id: [update...]}, marks: {name: number of
// updates of the session seen so far}, elicitations: [params] and
// completions: [params].
// The Go test (tsfeatures_test.go) runs each scenario and asserts on it. A
// scenario may start the bridge more than once (a restart) over the same
// state directory; proc numbers the processes.
import { client, ndJsonStream } from "@agentclientprotocol/sdk/unstable";
import { scenario, report as seen, text, runBridge, call, allowOnce, finish } from "./bridge.mjs";

Object.assign(seen, { sessions: {}, marks: {}, elicitations: [], completions: [] });
// completed resolves once an elicitation/complete has arrived.
let completed;
const completion = new Promise((r) => (completed = r));

// control talks to the Go test's model server: wait for an event there
// (the model got a request), or fire one (the model may answer).
const control = async (verb, name) => {
  const r = await fetch(`${scenario.control}/${verb}/${name}`, { method: "POST" });
  if (!r.ok) throw new Error(`control ${verb} ${name}: ${r.status}`);
};

// bridge runs fn against one fresh bridge process, then ends it by closing
// its stdin (as an editor that quits).
const bridge = (fn) =>
  runBridge(ndJsonStream, (stream) =>
    client({ name: "acp-bridge-features-check" })
      .onNotification("session/update", ({ params }) => {
        (seen.sessions[params.sessionId] ??= []).push(params.update);
      })
      .onRequest("session/request_permission", allowOnce)
      .onRequest("elicitation/create", ({ params }) => {
        seen.elicitations.push(params);
        return scenario.elicitationAnswer ?? { action: "decline" };
      })
      .onNotification("elicitation/complete", ({ params }) => {
        seen.completions.push(params);
        completed();
      })
      .connectWith(stream, fn),
  );

const mark = (name, sid) => {
  seen.marks[name] = (seen.sessions[sid] ?? []).length;
};

const init = (ctx, caps) =>
  call(ctx, "initialize", "initialize", {
    protocolVersion: 1,
    clientCapabilities: caps ?? scenario.clientCapabilities ?? {},
    clientInfo: { name: "features-check", version: "1" },
  });
const newSession = (ctx, name = "new") => call(ctx, name, "session/new", { cwd: scenario.cwd, mcpServers: scenario.mcpServers ?? [] });
const steeringMeta = { steering: { idleBehavior: "promptRequired" } };

const scenarios = {
  // A message steered between two model requests of a running turn joins
  // it; with no turn running the answer is promptRequired; a load replays
  // the steered message where it joined.
  async steering() {
    await bridge(async (ctx) => {
      await init(ctx);
      const s = await newSession(ctx);
      const sid = s.sessionId;
      await call(ctx, "idleSteer", "_session/steering", { sessionId: sid, prompt: text("too early"), _meta: steeringMeta });
      const prompt = call(ctx, "prompt", "session/prompt", { sessionId: sid, prompt: text(scenario.prompt) });
      await control("wait", "first-request");
      await call(ctx, "steer", "_session/steering", { sessionId: sid, prompt: text(scenario.steer), _meta: steeringMeta });
      await control("fire", "steered");
      await prompt;
      await call(ctx, "lateSteer", "_session/steering", { sessionId: sid, prompt: text("too late"), _meta: steeringMeta });
      mark("load", sid);
      await call(ctx, "load", "session/load", { sessionId: sid, cwd: scenario.cwd, mcpServers: [] });
    });
  },

  // $/cancel_request on a running prompt, then on a load as it starts.
  async cancelRequest() {
    await bridge(async (ctx) => {
      await init(ctx);
      const s = await newSession(ctx);
      const sid = s.sessionId;
      const ac = new AbortController();
      const prompt = call(ctx, "prompt", "session/prompt", { sessionId: sid, prompt: text(scenario.prompt) }, { cancellationSignal: ac.signal });
      await control("wait", "first-request");
      ac.abort();
      await prompt;
      await call(ctx, "again", "session/prompt", { sessionId: sid, prompt: text("again after cancel") });
      const al = new AbortController();
      const load = call(ctx, "load", "session/load", { sessionId: sid, cwd: scenario.cwd, mcpServers: [] }, { cancellationSignal: al.signal });
      al.abort();
      await load;
      mark("reload", sid);
      await call(ctx, "reload", "session/load", { sessionId: sid, cwd: scenario.cwd, mcpServers: [] });
    });
  },

  // Boolean config options: listed, toggled, and acted on (show_thoughts
  // off hides the reasoning), only for a client that takes them.
  async booleans() {
    await bridge(async (ctx) => {
      await init(ctx);
      const s = await newSession(ctx);
      const sid = s.sessionId;
      if (scenario.toggle) {
        await call(ctx, "set", "session/set_config_option", { sessionId: sid, configId: "show_thoughts", type: "boolean", value: false });
      } else {
        await call(ctx, "set", "session/set_config_option", { sessionId: sid, configId: "mode", value: "plan" });
      }
      await call(ctx, "prompt", "session/prompt", { sessionId: sid, prompt: text(scenario.prompt) });
    });
  },

  // Rename and archive a session, then again after a restart: both
  // survive it, the archived session is out of the default list and
  // loads as before.
  async titles() {
    let sid;
    await bridge(async (ctx) => {
      const init0 = await init(ctx);
      seen.responses.caps0 = init0?.agentCapabilities?.sessionCapabilities ?? {};
      const s = await newSession(ctx);
      sid = s.sessionId;
      await call(ctx, "prompt", "session/prompt", { sessionId: sid, prompt: text(scenario.prompt) });
      await call(ctx, "setTitle", "session/set_title", { sessionId: sid, title: scenario.title });
      await call(ctx, "archive", "session/archive", { sessionId: sid });
      await call(ctx, "list0", "session/list", {});
      await call(ctx, "listAll0", "session/list", { archived: "include" });
    });
    await bridge(async (ctx) => {
      await init(ctx);
      await call(ctx, "list1", "session/list", {});
      await call(ctx, "listOnly1", "session/list", { archived: "only" });
      mark("load", sid);
      await call(ctx, "load", "session/load", { sessionId: sid, cwd: scenario.cwd, mcpServers: [] });
      await call(ctx, "unarchive", "session/unarchive", { sessionId: sid });
      await call(ctx, "list2", "session/list", {});
    });
  },

  // The question tool: a form elicitation the client answers, or, for a
  // client without elicitation, a turn that ends with the question.
  async question() {
    await bridge(async (ctx) => {
      await init(ctx);
      const s = await newSession(ctx);
      await call(ctx, "prompt", "session/prompt", { sessionId: s.sessionId, prompt: text(scenario.prompt) });
    });
  },

  // An MCP server of the session (scenario.mcpServers) asks the user for
  // input while the model calls its tool: the form (or URL) reaches this
  // client as elicitation/create, and scenario.elicitationAnswer goes
  // back; with scenario.waitCompletion the connection stays until the
  // server's elicitation/complete has arrived (it travels on its own).
  async mcpElicitation() {
    await bridge(async (ctx) => {
      await init(ctx);
      const s = await newSession(ctx);
      await call(ctx, "prompt", "session/prompt", { sessionId: s.sessionId, prompt: text(scenario.prompt) });
      if (scenario.waitCompletion) {
        let timer;
        const late = new Promise((_, fail) => (timer = setTimeout(() => fail(new Error("no elicitation/complete within 60s")), 60000)));
        await Promise.race([completion, late]).finally(() => clearTimeout(timer));
      }
    });
  },

  // Provider configuration: list, a refused set, the set (scenario.set:
  // another endpoint and its key), list again, then a turn, which goes to
  // the endpoint set.
  async providers() {
    await bridge(async (ctx) => {
      const i = await init(ctx);
      seen.responses.caps = i?.agentCapabilities ?? {};
      await call(ctx, "list0", "providers/list", {});
      await call(ctx, "badSet", "providers/set", { ...scenario.set, apiType: "anthropic" });
      await call(ctx, "set", "providers/set", scenario.set);
      await call(ctx, "list1", "providers/list", {});
      const s = await newSession(ctx);
      await call(ctx, "prompt", "session/prompt", { sessionId: s.sessionId, prompt: text(scenario.prompt) });
    });
  },
};

await finish(() => scenarios[scenario.name]());
