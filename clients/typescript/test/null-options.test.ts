// An optional option given as null is left out, as TypeScript callers
// mean it and as Python's None is: expect: null is no fence, and so on.
// What has no JSON form (reply's undefined) is refused naming the argument.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CairnClient, type PatchOp } from "../src/index.js";
import { startServer, type LocalServer } from "../src/local.js";
import { cairnBin, required } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.skipIf(!bin)("null options", () => {
  let srv: LocalServer;
  serveForSuite(bin!, (s) => {
    srv = s;
  });

  it("takes expect: null for no fence, in commit, patch, ask and reply", async () => {
    // Each was InvalidError "expect: want a whole number, not null",
    // where Python's expect=None commits unfenced.
    const c = srv.client;
    const none = null as unknown as number;
    expect((await c.commit("fence", { n: 1 }, { expect: none })).step).toBe(1);
    expect((await c.commit("fence", { n: 2 }, { expect: none })).step).toBe(2);
    const ops: PatchOp[] = [{ op: "replace", path: "/n", value: 3 }];
    expect((await c.patch("fence", ops, { expect: none })).step).toBe(3);
    const q = await c.ask("fence", { n: 3 }, "go on?", { expect: none });
    expect(q.step).toBe(4);
    const r = await c.reply("fence", "yes", { expect: none });
    expect(r.step).toBe(5);
    expect(r.record).toEqual({ reply: "yes", in_reply_to: 4 });
    expect((await c.head("fence"))?.state).toEqual({ n: 3 });
  });

  it("takes null for a fresh idempotency key, the head to fork, no log bounds, every session, no record members", async () => {
    const c = srv.client;
    // idempotencyKey: null was refused ("idempotencyKey null: want ..."); Python's None is a fresh key.
    const a = await c.commit("nulls", { n: 1 }, { idempotencyKey: null as unknown as string });
    const b = await c.commit("nulls", { n: 2 }, { idempotencyKey: null as unknown as string, expect: a.step });
    expect(a.idempotency_key).toMatch(uuid);
    expect(b.idempotency_key).toMatch(uuid);
    expect(b.idempotency_key).not.toBe(a.idempotency_key);
    // limit: null and from: null were refused; Python's None leaves them out.
    const whole = await c.log("nulls");
    expect(whole.map((s) => s.step)).toEqual([2, 1]);
    expect(await c.log("nulls", { limit: null as unknown as number, from: null as unknown as number })).toEqual(whole);
    const all = [];
    for await (const st of c.logAll("nulls", { from: null as unknown as number })) all.push(st);
    expect(all).toEqual(whole);
    // step: null was refused; Python's fork(step=None) forks the head.
    const f = await c.fork("nulls", "nulls-fork", { step: null as unknown as number });
    expect(f.origin ?? f.parent).toBe(`nulls@${b.step}`);
    expect((await c.head("nulls-fork"))?.state).toEqual({ n: 2 });
    // sessions(null) was a TypeError; Python's sessions(None) lists every session.
    expect(await c.sessions(null as unknown as string)).toEqual(await c.sessions());
    // ask's record: null was a TypeError: it is no other members.
    const q = await c.ask("nulls-ask", {}, "ok?", { record: null as unknown as Record<string, unknown> });
    expect(q.record).toEqual({ question: "ok?" });
    // reply(s, null) stores null, as Python's reply(s, None).
    const r = await c.reply("nulls-ask", null, { expect: q.step });
    expect(r.record).toEqual({ reply: null, in_reply_to: q.step });
  });

  it("takes signal: null as no signal, and fetch: null as the default", async () => {
    // Both were TypeErrors; fetch's own RequestInit takes signal: null.
    const c = srv.client;
    const st = await c.commit("sig", { n: 1 }, { signal: null as unknown as AbortSignal });
    expect((await c.head("sig", { signal: null as unknown as AbortSignal }))?.step).toBe(st.step);
    const other = new CairnClient({ url: srv.url, token: srv.token, fetch: null as unknown as typeof fetch });
    try {
      expect((await other.head("sig"))?.state).toEqual({ n: 1 });
    } finally {
      other.close();
    }
  });

  it("refuses reply's undefined, which has no JSON form, naming the argument, and stores nothing", async () => {
    // It went out as no input, and the server's "input is required" named the API's field.
    const c = srv.client;
    const q = await c.ask("undef", {}, "ok?");
    for (const call of [() => c.reply("undef", undefined), () => (c.reply as (s: string) => Promise<unknown>)("undef")]) {
      const e = await call().catch((x) => x);
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toBe("input: want the human's answer (any JSON value; null for none), not undefined, which JSON has no form for");
    }
    expect((await c.head("undef"))?.step).toBe(q.step);
  });

  it("refuses a url of \"\" rather than take $CAIRN_URL's server", async () => {
    // With CAIRN_URL set, "" said "no server URL: pass url or set CAIRN_URL".
    const was = process.env.CAIRN_URL;
    process.env.CAIRN_URL = srv.url;
    try {
      expect(() => new CairnClient({ url: "" })).toThrow(new Error(`url: want the server's URL, not "" (leave url out for $CAIRN_URL)`));
      const c = new CairnClient({ url: null as unknown as string, token: srv.token });
      expect(c.url).toBe(srv.url);
      c.close();
    } finally {
      if (was === undefined) delete process.env.CAIRN_URL;
      else process.env.CAIRN_URL = was;
    }
  });

  it("starts a server with store: null and bin: null as left out ($CAIRN_STORE, $CAIRN_BIN)", async () => {
    // Both were TypeErrors; Python's open(store=None, bin=None) takes the defaults.
    const dir = mkdtempSync(join(tmpdir(), "cairn-null-"));
    const saved = { store: process.env.CAIRN_STORE, bin: process.env.CAIRN_BIN };
    process.env.CAIRN_STORE = dir;
    process.env.CAIRN_BIN = bin!;
    let s: LocalServer | undefined;
    try {
      s = await startServer({ store: null as unknown as string, bin: null as unknown as string });
      await s.client.commit("where", { n: 1 });
    } finally {
      for (const [k, v] of [["CAIRN_STORE", saved.store], ["CAIRN_BIN", saved.bin]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await s?.close();
    }
    // The commit went to $CAIRN_STORE: a server on that store reads it.
    const t = await startServer({ bin: bin!, store: dir });
    try {
      expect((await t.client.head("where"))?.state).toEqual({ n: 1 });
    } finally {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
