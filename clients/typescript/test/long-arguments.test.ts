// A prefix or a step reference far longer than any session's name is
// refused in the server's words for a long one, never as the server's
// plain "431 Request Header Fields Too Large" (a URL past its 64 KiB of
// headers), which names no argument.
import { describe, expect, it } from "vitest";
import { InvalidError } from "../src/index.js";
import { type LocalServer } from "../src/local.js";
import { cairnBin, required } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const rule = "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'";
const start = `"${"x".repeat(32)}…"`;

describe.skipIf(!bin)("long arguments", () => {
  let srv: LocalServer;
  serveForSuite(bin!, (s) => {
    srv = s;
  });

  it("refuses a huge prefix or step reference naming it", async () => {
    const c = srv.client;
    await c.commit("x", {});
    const p = await c.sessions("x".repeat(100_000)).catch((e) => e);
    expect(p).toBeInstanceOf(InvalidError);
    expect(p.message).toBe(`cairn: 400 bad_request: prefix: ${start} (100000 characters) is not the start of a session name: ${rule}`);
    for (const [a, b, what] of [["x".repeat(100_000), "x", "a"], ["x", "x".repeat(100_000) + "@1", "b"]]) {
      const e = await c.diff(a, b).catch((x) => x);
      expect(e).toBeInstanceOf(InvalidError);
      expect(e.message).toBe(`cairn: 400 bad_request: ${what}: session ${start} (100000 characters): ${rule}`);
    }
    const n = await c.diff("x", "x@" + "9".repeat(100_000)).catch((x) => x);
    expect(n).toBeInstanceOf(InvalidError);
    expect(n.message).toBe(`cairn: 400 bad_request: b: bad step reference "x@${"9".repeat(30)}…" (100002 characters): step number too large (at most 18446744073709551615)`);
    // What the server takes is sent as before.
    expect(await c.sessions("x".repeat(128))).toEqual([]);
    expect(await c.diff("x@" + "0".repeat(30) + "1", "x")).toEqual([]);
  });
});
