// Patches change what the saver sends, never what it stores: the same
// calls through a saver that patches and one that sends whole states
// store the same bytes at every step (checkpoints, writes before and after
// their put, a channel carried over, time travel onto a fork, a subgraph
// namespace, a channel whose name the server escapes), and read back the
// same tuples.
import { rmSync } from "node:fs";
import type { Checkpoint, PendingWrite } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CairnClient } from "@cairnlog/client";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { CairnSaver } from "../src/index.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const id = (n: number) => `1f0c0000-0000-6000-8000-${String(n).padStart(12, "0")}`;
const msg = (n: number) => ({ role: "ai", content: `message ${n} ` + "é✓😀 ".repeat(200), n });
const odd = "odd\u2028channel";

function cp(n: number, values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return { v: 4, id: id(n), ts: `2026-01-01T00:00:${String(n).padStart(2, "0")}.000Z`, channel_values: values, channel_versions: versions, versions_seen: { model: { messages: n } } };
}

/** The same calls, in the same order, on one saver. */
async function script(saver: CairnSaver): Promise<void> {
  const root = { configurable: { thread_id: "t", checkpoint_ns: "" } };
  const at = (n: number, ns = "") => ({ configurable: { thread_id: "t", checkpoint_ns: ns, checkpoint_id: id(n) } });
  const meta = (step: number) => ({ source: "loop" as const, step, parents: {} });
  await saver.put(root, cp(1, { messages: [msg(0)] }, { messages: 1 }), meta(0), { messages: 1 });
  await saver.putWrites(at(1), [["messages", [msg(1)]]], "task-1");
  await saver.put(at(1), cp(2, { messages: [msg(0), msg(1)], [odd]: "x" }, { messages: 2, [odd]: 1 }), meta(1), { messages: 2, [odd]: 1 });
  await saver.putWrites(at(2), [["messages", [msg(2)]], ["extra", { a: 1 }]] as PendingWrite[], "task-2");
  await saver.putWrites(at(2), [["__error__", { message: "boom" }]] as PendingWrite[], "task-3");
  // odd is carried over from checkpoint 2: its version is the same.
  await saver.put(at(2), cp(3, { messages: [msg(0), msg(1), msg(2)], [odd]: "x" }, { messages: 3, [odd]: 1 }), meta(2), { messages: 3 });
  // Time travel: a new checkpoint after 2, which is no longer the newest: a fork.
  await saver.put(at(2), cp(4, { messages: [msg(0), msg(1), msg(9)] }, { messages: 4 }), meta(2), { messages: 4 });
  await saver.putWrites(at(4), [["messages", [msg(10)]]], "task-4");
  // A subgraph's namespace.
  await saver.put({ configurable: { thread_id: "t", checkpoint_ns: "sub:1" } }, cp(5, { items: [1, 2] }, { items: 1 }), meta(0), { items: 1 });
  // Writes handed over before their checkpoint's put, as LangGraph does.
  await Promise.all([
    saver.putWrites(at(6), [["messages", [msg(12)]]], "task-6"),
    saver.put(at(3), cp(6, { messages: [msg(0), msg(1), msg(2), msg(11)], [odd]: "y" }, { messages: 5, [odd]: 2 }), meta(3), { messages: 5, [odd]: 2 }),
  ]);
}

/** stored maps each step a saver's sessions wrote (not fork copies) to its state, byte for byte. */
async function stored(srv: LocalServer, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const s of await srv.client.sessions(prefix + ".")) {
    for (const st of await srv.client.log(s.session)) {
      if (st.session !== s.session || st.origin) continue;
      const r = await fetch(`${srv.url}/v1/sessions/${encodeURIComponent(st.session)}/steps/${st.step}`, { headers: { Authorization: "Bearer " + srv.token } });
      const text = await r.text(); // the state, byte for byte as stored, ends the answer
      const rec = st.record as { langgraph: string; checkpoint_id: string; writes: number };
      out.set(`${rec.checkpoint_id} ${rec.langgraph} ${rec.writes}`, text.slice(text.indexOf(',"state":') + 9, text.lastIndexOf("}")));
    }
  }
  return out;
}

describe.skipIf(!bin)("patches", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-patches-");
    srv = await startServer({ bin, store: dir });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("store what whole states store, step by step", async () => {
    let patchBodies = 0;
    const counting: typeof fetch = async (input, init) => {
      if (typeof init?.body === "string" && init.body.startsWith('{"patch":')) patchBodies++;
      return fetch(input, init);
    };
    const patching = new CairnSaver({ client: new CairnClient({ url: srv.url, token: srv.token, fetch: counting }), prefix: "patch" });
    const whole = new CairnSaver({ client: srv.client, prefix: "whole", patches: false });
    await script(patching);
    await script(whole);
    // Every step after the first of each session went as a patch.
    expect(patchBodies).toBe(9);

    const a = await stored(srv, "patch");
    const b = await stored(srv, "whole");
    expect(a.size).toBe(11);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [k, v] of a) expect(v, k).toBe(b.get(k));
    expect([...a.values()].some((v) => v.includes(odd))).toBe(true);

    for (let n = 1; n <= 6; n++) {
      const ns = n === 5 ? "sub:1" : "";
      const cfg = { configurable: { thread_id: "t", checkpoint_ns: ns, checkpoint_id: id(n) } };
      // Fresh savers: they read what is stored, not what they cached.
      const ta = await new CairnSaver({ client: srv.client, prefix: "patch" }).getTuple(cfg);
      const tb = await new CairnSaver({ client: srv.client, prefix: "whole" }).getTuple(cfg);
      expect(ta, `checkpoint ${n}`).toBeDefined();
      expect(ta).toEqual(tb);
    }
  });

  it("patch after the head it saw, never a stale one", async () => {
    const a = new CairnSaver({ client: srv.client, prefix: "stale" });
    const b = new CairnSaver({ client: srv.client, prefix: "stale" });
    const cfg = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(1) } };
    await a.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, cp(1, { messages: [msg(0)] }, { messages: 1 }), { source: "loop", step: 0, parents: {} }, { messages: 1 });
    // Another process writes after a's step: a's idea of the head is stale.
    await b.putWrites(cfg, [["messages", [msg(1)]]], "task-b");
    await a.putWrites(cfg, [["messages", [msg(2)]]], "task-a");
    const t = await new CairnSaver({ client: srv.client, prefix: "stale" }).getTuple(cfg);
    expect(t?.pendingWrites?.map(([task]) => task).sort()).toEqual(["task-a", "task-b"]);
    expect(t?.checkpoint.channel_values).toEqual({ messages: [msg(0)] });
  });
});
