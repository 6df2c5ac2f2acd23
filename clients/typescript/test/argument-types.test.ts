// Arguments of the wrong type are a TypeError naming the argument, never another value.
import { describe, expect, it } from "vitest";
import { type LocalServer } from "../src/local.js";
import { cairnBin, required } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

describe.skipIf(!bin)("argument types", () => {
  let srv: LocalServer;
  serveForSuite(bin!, (s) => {
    srv = s;
  });

  it("refuses a sessions prefix that is no string", async () => {
    // sessions(5) listed the sessions named 5..., and sessions(0) every session.
    const c = srv.client;
    await c.commit("5x", {});
    await c.commit("y", {});
    // (null lists every session, as Python's None: null-options.test.ts.)
    for (const [bad, shown] of [[5, "5"], [0, "0"], [["5"], "an object"], [true, "true"]] as [unknown, string][]) {
      const e = await c.sessions(bad as string).catch((x) => x);
      expect(e, shown).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`prefix: want the start of session names (a string), not ${shown}`);
    }
    expect((await c.sessions("5")).map((s) => s.session)).toEqual(["5x"]);
    expect((await c.sessions()).length).toBe(2);
    expect((await c.sessions("")).length).toBe(2);
  });

  it("refuses diff steps that are no string", async () => {
    // diff(1, 2) diffed the sessions named "1" and "2".
    const c = srv.client;
    await c.commit("1", { n: 1 });
    await c.commit("2", { n: 2 });
    for (const [a, b, what, shown] of [[1, "2", "a", "1"], ["1", 2, "b", "2"], [undefined, "1", "a", "undefined"], ["1", { s: "2" }, "b", "an object"]] as [unknown, unknown, string, string][]) {
      const e = await c.diff(a as string, b as string).catch((x) => x);
      expect(e, `${what} ${shown}`).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`${what}: want a step ("SESSION" or "SESSION@N", a string), not ${shown}`);
    }
    expect(await c.diff("1", "2")).toEqual([{ path: "/n", kind: "changed" }]);
  });

  it("refuses a state option that is no boolean", async () => {
    // head(s, { state: "false" }) read the state: only false left it out.
    const c = srv.client;
    await c.commit("st", { n: 1 });
    for (const [bad, shown] of [["false", '"false"'], [0, "0"], [null, "null"]] as [unknown, string][]) {
      const state = bad as boolean;
      for (const [what, call] of [
        ["head", () => c.head("st", { state })],
        ["step", () => c.step("st", 1, { state })],
        ["wait", () => c.wait("st", 0, { timeout: 0, state })],
      ] as const) {
        const e = await call().catch((x) => x);
        expect(e, `${what} ${shown}`).toBeInstanceOf(TypeError);
        expect(e.message).toBe(`state: want true or false, not ${shown}`);
      }
    }
    expect((await c.head("st", { state: false }))?.state).toBeUndefined();
    expect((await c.step("st", 1, { state: true })).state).toEqual({ n: 1 });
  });

  it("refuses an ask record that is no plain object", async () => {
    // ask(s, state, q, { record: "note" }) committed the record {"0": "n", "1": "o", ..., "question": q}.
    const c = srv.client;
    // (null is no other members: null-options.test.ts.)
    for (const [bad, shown] of [["note", "a string"], [["a"], "an object"], [5, "5"], [new Map(), "an object"]] as [unknown, string][]) {
      const e = await c.ask("rec", {}, "q?", { record: bad as Record<string, unknown> }).catch((x) => x);
      expect(e, shown).toBeInstanceOf(TypeError);
      expect(e.message).toBe(`record: want an object of the record's other members, not ${shown}`);
    }
    expect(await c.head("rec")).toBeUndefined();
    expect((await c.ask("rec", {}, "q?", { record: { turn: 1 } })).record).toEqual({ turn: 1, question: "q?" });
  });

  it("refuses an ask record holding question, which the question would replace", async () => {
    // ask(s, state, "real?", { record: { question: "other" } }) stored "real?" and lost "other" without a word.
    const c = srv.client;
    const e = await c.ask("recq", {}, "real?", { record: { question: "other", turn: 1 } }).catch((x) => x);
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe(`record: it holds "question", which ask sets to the question: leave it out of the record`);
    expect(await c.head("recq")).toBeUndefined();
  });
});
