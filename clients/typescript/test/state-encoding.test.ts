// What a state, record, reply or patch holds that JSON.stringify would
// change rather than send: refused, naming its place, or sent as given.
import { describe, expect, it } from "vitest";
import { InvalidError, makePatch } from "../src/index.js";
import { type LocalServer } from "../src/local.js";
import { cairnBin, required } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe.skipIf(!bin)("state encoding", () => {
  let srv: LocalServer;
  serveForSuite(bin!, (s) => {
    srv = s;
  });

  /** post commits a JSON text as it is, as another client would write it. */
  async function post(session: string, json: string): Promise<void> {
    const r = await fetch(`${srv.url}/v1/sessions/${session}/steps`, {
      method: "POST",
      headers: { Authorization: `Bearer ${srv.token}`, "Content-Type": "application/json" },
      body: json,
    });
    expect(r.status, await r.text()).toBe(201);
  }

  /** stored is the text of the session's head as the server answers it: its state's text as stored. */
  async function stored(session: string): Promise<string> {
    const r = await fetch(`${srv.url}/v1/sessions/${session}/head`, { headers: { Authorization: `Bearer ${srv.token}` } });
    const h = await r.text();
    return h.slice(h.indexOf(',"state":')).trimEnd();
  }

  it("stores -0 as -0, the state JSON's -0 is", async () => {
    // JSON.stringify wrote -0 as 0: it read back as 0, and the state was
    // another one (the server keeps a number's text: -0 and 0 differ).
    const c = srv.client;
    await c.commit("neg", { x: -0, a: [-0, 0, -1, "-0"], y: 0 }, { record: { r: -0 } });
    const h = await c.head("neg");
    expect(Object.is((h?.state as { x: number }).x, -0)).toBe(true);
    expect(Object.is((h?.state as { a: number[] }).a[0], -0)).toBe(true);
    expect(Object.is((h?.state as { a: number[] }).a[1], 0)).toBe(true);
    expect(Object.is((h?.state as { y: number }).y, 0)).toBe(true);
    expect(Object.is((h?.record as { r: number }).r, -0)).toBe(true);
    expect(h?.state).toEqual({ x: -0, a: [-0, 0, -1, "-0"], y: 0 });
    // The very state another writer's text {"x":-0,...} is; not {"x":0,...}.
    expect(await stored("neg")).toBe(',"state":{"x":-0,"a":[-0,0,-1,"-0"],"y":0}}');
    await post("neg-text", '{"state":{"x":-0,"a":[-0,0,-1,"-0"],"y":0}}');
    await post("zero-text", '{"state":{"x":0,"a":[0,0,-1,"-0"],"y":0}}');
    expect(await c.diff("neg", "neg-text")).toEqual([]);
    expect(await c.diff("neg", "zero-text")).toEqual([
      { path: "/x", kind: "changed" },
      { path: "/a/0", kind: "changed" },
    ]);
    // A patch from 0 to -0 is a change, and stores what the whole state would.
    const from = { x: 0, y: [1] };
    await c.commit("negp", from);
    const ops = makePatch(from, { x: -0, y: [1] });
    expect(ops).toEqual([{ op: "replace", path: "/x", value: -0 }]);
    expect(Object.is(ops![0].op === "replace" && ops![0].value, -0)).toBe(true);
    await c.patch("negp", ops!, { expect: 1 });
    expect(await stored("negp")).toBe(',"state":{"x":-0,"y":[1]}}');
  });

  it("refuses undefined, functions, symbols, BigInts and objects JSON.stringify would change, naming their place", async () => {
    // JSON.stringify left out a member that was a function or a symbol,
    // sent an array element that was undefined (or a function, or a
    // symbol) as null, sent a class's instance as a plain object and a
    // Uint8Array as {"0":..}: the step landed with a state other than the
    // one given.
    const c = srv.client;
    await c.ask("bad", { n: 1 }, "go?", { expect: 0 });
    const f = () => 1;
    for (const [value, shown] of [
      [f, "a function"],
      [Symbol("s"), "a symbol"],
    ] as const) {
      for (const [call, field, at] of [
        [() => c.commit("bad", { n: 1, m: { "a/b~": value } }), "state", "/m/a~1b~0"],
        [() => c.commit("bad", { n: 1 }, { record: { note: value } }), "record", "/note"],
        [() => c.reply("bad", { ok: true, why: value }), "input", "/why"],
        [() => c.patch("bad", [{ op: "add", path: "/m", value: { k: value } }]), "patch", "/0/value/k"],
      ] as const) {
        const e = await call().catch((x) => x);
        expect(e, `${field} ${shown}`).toBeInstanceOf(TypeError);
        expect(e.message).toBe(`${field}: the value at ${at} is ${shown}, which JSON has no form for (JSON.stringify would leave the member out): send null, or leave it out`);
      }
    }
    for (const [value, shown] of [
      [undefined, "undefined"],
      [f, "a function"],
      [Symbol("s"), "a symbol"],
    ] as const) {
      const e = await c.commit("bad", { n: [1, value] }).catch((x) => x);
      expect(e, shown).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`state: the value at /n/1 is ${shown}, which JSON has no form for (JSON.stringify would send it as null): send null`);
    }
    // An array's hole is undefined.
    // eslint-disable-next-line no-sparse-arrays
    const e1 = await c.commit("bad", { n: [1, , 3] }).catch((x) => x);
    expect(e1.message).toMatch(/^state: the value at \/n\/1 is undefined, /);
    const e2 = await c.commit("bad", { n: { big: 12345678901234567890n } }).catch((x) => x);
    expect(e2).toBeInstanceOf(TypeError);
    expect(e2.message).toBe("state: the value at /n/big is a BigInt, which JSON has no form for: send it as a string (String(n)), or as a number if it is at most 2^53");
    for (const [value, shown] of [
      [new Point(1, 2), "a Point"],
      [new Uint8Array([1, 2]), "a Uint8Array"],
      [/a+/, "a RegExp"],
      [new Error("boom"), "an Error"],
      [Object.create({ inherited: 1 }), "an object"],
    ] as const) {
      const e = await c.commit("bad", { n: 1, list: [{ v: value }] }).catch((x) => x);
      expect(e, shown).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`state: the value at /list/0/v is ${shown}, not a plain object or an array: JSON.stringify would send its own enumerable members, and it would read back as a plain object: send a plain object, or give it a toJSON`);
    }
    // The field itself.
    const e3 = await c.commit("bad", new Point(1, 2)).catch((x) => x);
    expect(e3.message).toMatch(/^state: the value is a Point, not a plain object/);
    for (const [bad, kind] of [[new Map([["a", 1]]), "Map"], [new Set([1]), "Set"]] as const) {
      const e = await c.commit("bad", { n: [bad] }).catch((x) => x);
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toMatch(new RegExp(`^state: the value at /n/0 is a ${kind}, which has no JSON form \\(JSON.stringify would send it as \\{\\}\\)`));
    }
    const head = await c.head("bad");
    expect(head?.step).toBe(1);
    expect(head?.state).toEqual({ n: 1 });
  });

  it("leaves out a member that is undefined: it reads back as undefined, as it was", async () => {
    const c = srv.client;
    const state: { a: number; b?: number; c: { d?: string } } = { a: 1, b: undefined, c: { d: undefined } };
    await c.commit("undef-member", state, { record: { r: undefined } });
    const h = await c.head("undef-member");
    expect(h?.state).toEqual({ a: 1, c: {} });
    expect((h?.state as typeof state).b).toBeUndefined();
    expect(h?.record).toEqual({});
  });

  it("sends what a toJSON gives, plain objects of any prototype-less kind, and boxed primitives as their values", async () => {
    const c = srv.client;
    const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    const bare = Object.create(null);
    bare.k = 1;
    const state = { when, buf: Buffer.from([1, 2]), bare, num: new Number(3), str: new String("s"), own: { toJSON: () => ({ v: 1 }) } };
    await c.commit("ok", state);
    expect((await c.head("ok"))?.state).toEqual({ when: "2026-01-02T03:04:05.000Z", buf: { type: "Buffer", data: [1, 2] }, bare: { k: 1 }, num: 3, str: "s", own: { v: 1 } });
  });

  it("leaves a field of the body that is undefined to the server, which names it", async () => {
    const c = srv.client;
    const e = await c.commit("undef", undefined).catch((x) => x);
    expect(e).toBeInstanceOf(InvalidError);
    expect(e.message).toMatch(/^cairn: 400 bad_request: state is required/);
  });
});
