// What the client refuses before it sends anything, and what it refuses
// to read rather than read wrong.
import { describe, expect, it } from "vitest";
import { CairnClient, InvalidError, LimitError } from "../src/index.js";
import { type LocalServer } from "../src/local.js";
import { cairnBin, required } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

describe.skipIf(!bin)("checks against cairn serve", () => {
  let srv: LocalServer;
  serveForSuite(bin!, (s) => {
    srv = s;
  });

  /** post commits a JSON text as it is, as another client (Python, Go) would write it. */
  async function post(session: string, json: string): Promise<void> {
    const r = await fetch(`${srv.url}/v1/sessions/${session}/steps`, {
      method: "POST",
      headers: { Authorization: `Bearer ${srv.token}`, "Content-Type": "application/json" },
      body: json,
    });
    expect(r.status, await r.text()).toBe(201);
  }

  it("refuses to read an integer a JavaScript number cannot hold, rather than round it", async () => {
    // JSON.parse read 12345678901234567890, committed by the Python
    // client, as 12345678901234567000: another number, without a word.
    const c = srv.client;
    await post("big", `{"state":{"a":[1,{"id":12345678901234567890}],"s":"12345678901234567890"},"record":{"n":-9007199254740993}}`);
    for (const [what, call] of [
      ["head", () => c.head("big")],
      ["step", () => c.step("big", 1)],
      ["wait", () => c.wait("big", 0, { timeout: 0 })],
    ] as const) {
      const e = await call().catch((x) => x);
      expect(e, what).toBeInstanceOf(LimitError);
      expect(e.message).toMatch(/^cairn: 422 limit: the answer holds the integer (12345678901234567890|-9007199254740993), which a JavaScript number cannot hold exactly \(JSON\.parse would read it as (12345678901234567000|-9007199254740992)\): /);
    }
    // The record's -(2^53+1) is in the log too.
    const e = await c.log("big").catch((x) => x);
    expect(e.message).toContain("the integer -9007199254740993,");
    // Without the state, and where the digits are a string's, it reads.
    await post("str", `{"state":{"s":"12345678901234567890","t":"\\"9007199254740993"},"record":{"big":"-9007199254740993","f":1e300,"g":12345678901234567890.5}}`);
    expect((await c.head("str"))?.state).toEqual({ s: "12345678901234567890", t: '"9007199254740993' });
    expect((await c.head("str"))?.record).toEqual({ big: "-9007199254740993", f: 1e300, g: 12345678901234567890.5 });
  });

  it("refuses to read a number past the largest double, rather than read it as Infinity", async () => {
    // JSON.parse read 1e400, committed by another writer, as Infinity: a
    // state silently changed, which this client then refused to commit
    // again (NaN and infinities are no JSON numbers).
    const c = srv.client;
    for (const [i, n] of ["1e400", "-1E+400", "1.5e309", `${"9".repeat(400)}.0`].entries()) {
      await post(`inf${i}`, `{"state":{"ok":[1e300,"1e400"],"n":${n}}}`);
      for (const [what, call] of [
        ["head", () => c.head(`inf${i}`)],
        ["step", () => c.step(`inf${i}`, 1)],
        ["wait", () => c.wait(`inf${i}`, 0, { timeout: 0 })],
      ] as const) {
        const e = await call().catch((x) => x);
        expect(e, `${what} ${n}`).toBeInstanceOf(LimitError);
        const shown = n.length <= 40 ? n : n.slice(0, 40) + "...";
        expect(e.message).toBe(`cairn: 422 limit: the answer holds the number ${shown}, which a JavaScript number cannot hold (JSON.parse would read it as ${n.startsWith("-") ? "-" : ""}Infinity): store such numbers as strings`);
      }
    }
    // A large double, and an exponent in a string, read as they are.
    await post("finite", `{"state":{"f":1e300,"g":1.7976931348623157e308,"s":"1e400","t":5e-324}}`);
    expect((await c.head("finite"))?.state).toEqual({ f: 1e300, g: 1.7976931348623157e308, s: "1e400", t: 5e-324 });
  });

  it("refuses an integer past the largest double as it refuses any other it would change", async () => {
    // JSON.parse reads a 400-digit integer as Infinity; the check threw
    // a RangeError of BigInt(Infinity) instead of saying so.
    const c = srv.client;
    await post("huge", `{"state":{"n":1${"0".repeat(400)}}}`);
    const e = await c.head("huge").catch((x) => x);
    expect(e).toBeInstanceOf(LimitError);
    expect(e.message).toContain("JSON.parse would read it as Infinity");
  });

  it("reads integers past 2^53 that a number holds exactly, and those JSON.stringify writes", async () => {
    // JSON.stringify writes 2**60 as 1152921504606847000 (no double is
    // nearer to it): this client's own states read back.
    const c = srv.client;
    await c.commit("exact", { a: 2 ** 60, b: 1e20, c: Number.MAX_SAFE_INTEGER, d: -(2 ** 53), e: -(2 ** 70) });
    expect((await c.head("exact"))?.state).toEqual({ a: 2 ** 60, b: 1e20, c: Number.MAX_SAFE_INTEGER, d: -(2 ** 53), e: -(2 ** 70) });
    // 2^60 as Python writes it, every digit: a double holds it exactly.
    await post("exact2", `{"state":{"a":1152921504606846976,"b":100000000000000000000}}`);
    expect((await c.head("exact2"))?.state).toEqual({ a: 2 ** 60, b: 1e20 });
  });

  it("refuses a token an HTTP header cannot carry when the client is made", async () => {
    // A newline was "could not reach the cairn server: ERR_INVALID_CHAR":
    // unreachable, when the server was never asked.
    for (const [token, shown] of [
      ["tok\n", "U+000A"],
      ["a\r\nb", "U+000D"],
      ["a\0b", "U+0000"],
      ["é", "U+00E9"],
      ["\u2603", "U+2603"],
      ["a\x7fb", "U+007F"],
    ]) {
      let e: unknown;
      try {
        new CairnClient({ url: srv.url, token });
      } catch (x) {
        e = x;
      }
      expect(e, JSON.stringify(token)).toBeInstanceOf(InvalidError);
      expect((e as Error).message).toMatch(new RegExp(`^cairn: 400 bad_request: token: it holds ${shown.replace("+", "\\+")}, a character an HTTP header cannot carry: want printable ASCII`));
    }
    // A printable one goes out: this server's 401 says it arrived.
    const e = await new CairnClient({ url: srv.url, token: "a b\tc~" }).head("x").catch((x) => x);
    expect(e.status).toBe(401);
  });

  it("refuses ask without a question", async () => {
    // ask(s, state, undefined) committed a record without a question, and
    // null {"question": null}: a step awaiting the answer to nothing.
    const c = srv.client;
    for (const q of [undefined, null]) {
      const e = await c.ask("noq", {}, q).catch((x) => x);
      expect(e).toBeInstanceOf(InvalidError);
      expect(e.message).toBe(`cairn: 400 bad_request: question: want a question (any JSON value but null), not ${q}`);
    }
    expect(await c.head("noq")).toBeUndefined();
    for (const q of ["q?", 0, false, "", { text: "q?" }]) {
      const st = await c.ask(`q${JSON.stringify(q).length}`, {}, q);
      expect(st.record).toEqual({ question: q });
    }
  });
});
