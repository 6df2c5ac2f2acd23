// makePatch reads the new state as the client sends a whole state: a patch
// stores what committing it whole stores, and what a whole commit refuses,
// makePatch refuses in the same words.
import { describe, expect, it } from "vitest";
import { makePatch } from "../src/index.js";
import type { LocalServer } from "../src/local.js";
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

describe.skipIf(!bin)("makePatch against cairn serve", () => {
  let srv: LocalServer;
  serveForSuite(bin!, (s) => {
    srv = s;
  });

  /** stored is the state text of session s's step n, byte for byte. */
  const stored = async (s: string, n: number) => {
    const r = await fetch(`${srv.url}/v1/sessions/${s}/steps/${n}`, { headers: { Authorization: "Bearer " + srv.token } });
    const text = await r.text();
    return text.slice(text.indexOf(',"state":') + 9, text.lastIndexOf("}"));
  };

  it("a patch stores what committing the new state whole stores", async () => {
    const c = srv.client;
    // [from, to]: undefined members (left out by JSON.stringify), toJSON
    // (a Date is its text; a toJSON giving undefined leaves the member
    // out), Number and String objects (their values).
    const pairs: [unknown, unknown][] = [
      [{ a: 1 }, { a: undefined }],
      [{ a: 1 }, { a: 1, b: undefined }],
      [{ a: { x: 1 } }, { a: { x: 1, y: undefined, z: 2 } }],
      [{ a: 1 }, { a: { y: undefined } }],
      [{ a: [1, 2] }, { a: [{ u: undefined, v: 1 }, 2] }],
      [{ a: "x" }, { a: new Date(0) }],
      [{ a: "1970-01-01T00:00:00.000Z" }, { a: new Date(0) }],
      [{ a: "1970-01-01T00:00:00.000Z", b: 1 }, { a: new Date(0), b: 2 }],
      [{ a: "x", b: 1 }, { a: { toJSON: () => undefined }, b: 1 }],
      [{ a: [1] }, { a: [new Date(0)] }],
      [{ a: [1] }, { a: [1, new Date(0)] }],
      [{ a: 1 }, { a: 1, b: new Date(0) }],
      [{ a: 1, b: "s" }, { a: new Number(2), b: new String("s") }],
      [{ a: { d: "1970-01-01T00:00:00.000Z" } }, { a: { d: new Date(0), e: undefined } }],
    ];
    for (const [i, [from, to]] of pairs.entries()) {
      const whole = `mpw-${i}`;
      const patched = `mpp-${i}`;
      await c.commit(whole, to);
      await c.commit(patched, from);
      const ops = makePatch((await c.head(patched))!.state, to);
      expect(ops, `pair ${i}`).toBeDefined();
      await c.patch(patched, ops!, { expect: 1 });
      expect(await stored(patched, 2), `pair ${i}: ${JSON.stringify(ops)}`).toBe(await stored(whole, 1));
    }
  });

  it("refuses what a whole commit refuses, in its words, naming the place", async () => {
    const c = srv.client;
    const fn = () => 1;
    // They went into the patch as null (an undefined or a function in an
    // array), were left out (a function member), went out as a replace
    // without a value (a toJSON giving undefined in an array), or failed
    // with JSON.stringify's own words (a BigInt).
    const refused: [unknown, unknown][] = [
      [{ a: [1] }, { a: [undefined] }],
      [{ a: [1] }, { a: [1, undefined] }],
      [[1, 2], [1, undefined]],
      [{ a: [1] }, { a: [, 2] }], // eslint-disable-line no-sparse-arrays
      [{ a: 1 }, { a: fn }],
      [{ a: [1] }, { a: [fn] }],
      [{ a: 1 }, { a: Symbol("s") }],
      [{ a: 1 }, { a: 1n }],
      [{ a: 1 }, { a: new Map() }],
      [{ a: 1 }, { a: new Point(1, 2) }],
      [{ a: [1] }, { a: [{ toJSON: () => undefined }] }],
      [{ a: 1 }, { a: NaN }],
      [{ a: [1] }, { a: [1, Infinity] }],
      [{ a: { b: [0] } }, { a: { b: [0, { c: -Infinity }] } }],
    ];
    for (const [i, [from, to]] of refused.entries()) {
      const whole = await c.commit(`mpr-${i}`, to).catch((e) => e);
      expect(whole, `pair ${i}`).toBeInstanceOf(Error);
      const patch = (() => {
        try {
          return makePatch(from, to);
        } catch (e) {
          return e;
        }
      })();
      expect(patch, `pair ${i}`).toBeInstanceOf(whole.constructor);
      expect((patch as Error).message, `pair ${i}`).toBe(whole.message);
      expect((patch as Error).message, `pair ${i}`).toMatch(/^(cairn: 400 bad_request: )?state: the value at \/\S+ is /);
    }
    expect(await c.sessions("mpr-")).toEqual([]);
  });
});
