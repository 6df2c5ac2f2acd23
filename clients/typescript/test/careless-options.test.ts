// Options of the wrong type or value, as a careless caller passes them:
// refused at once in the caller's words, nothing sent, no server started.
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CairnClient, InvalidError, makePatch } from "../src/index.js";
import { startServer } from "../src/local.js";
import { cairnBin, tempDir } from "./harness.js";

/** A server that counts the requests it gets and answers each with cairn's 404. */
let server: Server;
let url: string;
let seen = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    seen++;
    req.resume();
    res.writeHead(404, { "Content-Type": "application/json" }).end('{"code":"not_found","error":"no such session"}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** caught is what f throws or rejects with. */
async function caught(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("careless options", () => {
  it("refuses options that are no object, in words, sending nothing", async () => {
    // null failed with "Cannot read properties of null (reading 'status')",
    // and 5 was taken for no options.
    const c = new CairnClient({ url });
    const calls: [string, (o: never) => unknown][] = [
      ["commit", (o) => c.commit("s", {}, o)],
      ["head", (o) => c.head("s", o)],
      ["step", (o) => c.step("s", 1, o)],
      ["patch", (o) => c.patch("s", [], o)],
      ["ask", (o) => c.ask("s", {}, "q?", o)],
      ["wait", (o) => c.wait("s", 0, o)],
      ["reply", (o) => c.reply("s", 1, o)],
      ["log", (o) => c.log("s", o)],
      ["logAll", (o) => c.logAll("s", o).next()],
      ["fork", (o) => c.fork("s", "t", o)],
      ["diff", (o) => c.diff("s", "t", o)],
      ["remove", (o) => c.remove("s", o)],
      ["sessions", (o) => c.sessions(undefined, o)],
      ["inbox", (o) => c.inbox(o)],
      ["new CairnClient", (o) => new CairnClient(o)],
      ["makePatch", (o) => makePatch({ a: 1 }, { a: 2 }, o)],
      ["startServer", (o) => startServer(o)],
    ];
    for (const [what, call] of calls) {
      for (const [bad, shown] of [[null, "null"], [5, "5"], ["x", "a string"]] as const) {
        const e = await caught(() => call(bad as never));
        expect(e, `${what} ${shown}`).toBeInstanceOf(TypeError);
        expect((e as Error).message, `${what} ${shown}`).toBe(`options: want an object of options, not ${shown}`);
      }
    }
    expect(seen).toBe(0);
  });

  it("refuses a patch that is no array, a URL that is no string, and null for a timeout or a page", async () => {
    // patch(s, undefined) got the server's "state is required"; a URL of 5
    // failed with "url.replace is not a function"; a timeout or a page of
    // null was taken for the default (30 s, 1000 steps), where Python
    // refuses None.
    const c = new CairnClient({ url });
    for (const [bad, shown] of [[undefined, "undefined"], [null, "null"], [{ op: "add" }, "an object"]] as const) {
      const e = await caught(() => c.patch("s", bad as never));
      expect(e, shown).toBeInstanceOf(TypeError);
      expect((e as Error).message).toBe(`ops: want an array of JSON Patch operations (makePatch makes one), not ${shown}`);
    }
    const u = await caught(() => new CairnClient({ url: 5 as never }));
    expect(u).toBeInstanceOf(TypeError);
    expect((u as Error).message).toBe(`url: want the server's URL (a string, such as "http://127.0.0.1:7474"), not 5`);
    const t = await caught(() => new CairnClient({ url, timeout: null as never }));
    expect((t as Error).message).toBe("timeout null: want seconds > 0 (the default is 90)");
    const w = await caught(() => c.wait("s", 0, { timeout: null as never }));
    expect(w).toBeInstanceOf(InvalidError);
    expect((w as Error).message).toBe("cairn: 400 bad_request: timeout: want seconds >= 0, not null");
    const p = await caught(() => c.logAll("s", { page: null as never }).next());
    expect(p).toBeInstanceOf(InvalidError);
    expect((p as Error).message).toBe("cairn: 400 bad_request: page: want a whole number, not null");
    expect(seen).toBe(0);
  });

  it("says a page under 1 in its own word, not the server's limit", async () => {
    // It was the server's `limit "0": want 1 to 10000`: the caller said page.
    const c = new CairnClient({ url });
    for (const page of [0, -1]) {
      const e = await caught(() => c.logAll("s", { page }).next());
      expect(e, String(page)).toBeInstanceOf(InvalidError);
      expect((e as Error).message).toBe(`cairn: 400 bad_request: page: want 1 or more steps a request, not ${page}`);
    }
    expect(seen).toBe(0);
    // A page past the server's bound is read as pages of 10,000 (here: one 404).
    const big = await caught(() => c.logAll("s", { page: 50_000 }).next());
    expect((big as Error).message).toBe("cairn: 404 not_found: no such session");
    expect(seen).toBe(1);
    seen = 0;
  });

  it("refuses makePatch's maxOps that is no whole number >= 0", async () => {
    // NaN made every patch unbounded, "5" was compared as a number, -1 gave up on every one.
    for (const [bad, shown] of [[-1, "-1"], [NaN, "NaN"], ["5", '"5"'], [1.5, "1.5"], [null, "null"]] as const) {
      const e = await caught(() => makePatch({ a: 1 }, { a: 2 }, { maxOps: bad as never }));
      expect(e, shown).toBeInstanceOf(InvalidError);
      expect((e as Error).message).toBe(`cairn: 400 bad_request: maxOps: want a whole number >= 0, not ${shown}`);
    }
    expect(makePatch({ a: 1 }, { a: 2 }, { maxOps: 0 })).toBeUndefined();
  });

  it("refuses startServer's store, bin or startTimeout of the wrong type or value before starting a server", async () => {
    // A store of 5 served the directory "5"; a startTimeout of 0, -1 or
    // NaN started a server, then killed it: "no address after -1000 ms". A
    // store of "" served $CAIRN_STORE or cairn's default store.
    // bin: must not be run: a name that is no cairn at all.
    const bin = "/nonexistent/cairn-not-run";
    for (const [opts, err, msg] of [
      [{ bin, store: 5 }, TypeError, "store: want a store URL or directory (a string), not 5"],
      [{ bin: 5 }, TypeError, "bin: want the path of the cairn binary (a string), not 5"],
      [{ bin, store: "" }, Error, `store: want a store URL or directory, not "" (leave store out for $CAIRN_STORE or cairn's default)`],
      [{ bin, startTimeout: 0 }, Error, "startTimeout 0: want seconds > 0 (the default is 30)"],
      [{ bin, startTimeout: -1 }, Error, "startTimeout -1: want seconds > 0 (the default is 30)"],
      [{ bin, startTimeout: NaN }, Error, "startTimeout NaN: want seconds > 0 (the default is 30)"],
      [{ bin, startTimeout: "30" }, Error, 'startTimeout "30": want seconds > 0 (the default is 30)'],
    ] as const) {
      const e = await caught(() => startServer(opts as never));
      expect(e, msg).toBeInstanceOf(err);
      expect((e as Error).message).toBe(msg);
    }
  });

  it("refuses a fetch that is no function and a signal that is no AbortSignal", async () => {
    // fetch: 5 made every call an UnavailableError, "could not reach the
    // cairn server at URL: this.fetch is not a function"; a signal of "x"
    // failed with "signal.throwIfAborted is not a function", and one of {}
    // (or { aborted: true }) went on without it.
    const f = await caught(() => new CairnClient({ url, fetch: 5 as never }));
    expect(f).toBeInstanceOf(TypeError);
    expect((f as Error).message).toBe("fetch: want a function (such as globalThis.fetch), not 5");
    const c = new CairnClient({ url });
    // (null is no signal, as fetch takes it: null-options.test.ts.)
    for (const [bad, shown] of [["x", "a string"], [{ aborted: true }, "an object"]] as const) {
      for (const [what, call] of [
        ["head", () => c.head("s", { signal: bad as never })],
        ["commit", () => c.commit("s", {}, { signal: bad as never })],
        ["logAll", () => c.logAll("s", { signal: bad as never }).next()],
      ] as const) {
        const e = await caught(call);
        expect(e, `${what} ${shown}`).toBeInstanceOf(TypeError);
        expect((e as Error).message).toBe(`signal: want an AbortSignal (such as AbortSignal.timeout(ms)), not ${shown}`);
      }
    }
    expect(seen).toBe(0);
  });
});

describe("startServer's env", () => {
  it("refuses an env that is no object of strings before starting a server", async () => {
    // "abc" was spread into the server's environment as 0=a 1=b 2=c, 5 as
    // nothing, and {X: 5} went out as X=5.
    const bin = "/nonexistent/cairn-not-run";
    for (const [env, msg] of [
      ["abc", "env: want an object of environment variables (names to strings), not a string"],
      [5, "env: want an object of environment variables (names to strings), not 5"],
      [["A=1"], "env: want an object of environment variables (names to strings), not an object"],
      [{ A: "1", B: 5 }, 'env: "B": want a string, not 5'],
      [{ A: null }, 'env: "A": want a string, not null'],
    ] as const) {
      const e = await caught(() => startServer({ bin, env: env as never }));
      expect(e, msg).toBeInstanceOf(TypeError);
      expect((e as Error).message).toBe(msg);
    }
    // null is no more environment, and an undefined member is left out, as Node leaves it:
    // both go on to start the server (here: the binary that is not there).
    for (const env of [null, { A: undefined }]) {
      const e = await caught(() => startServer({ bin, env: env as never }));
      expect((e as Error).message).toContain("cairn-not-run");
    }
  });
});

describe("startServer's timeout", () => {
  it("is its client's, checked before a server starts", async () => {
    // startServer had no timeout (Python's open() has): its client's
    // requests were 90 s each, whatever the caller needed.
    const bin = "/nonexistent/cairn-not-run";
    for (const [timeout, msg] of [
      [0, "timeout 0: want seconds > 0 (the default is 90)"],
      [-1, "timeout -1: want seconds > 0 (the default is 90)"],
      [NaN, "timeout NaN: want seconds > 0 (the default is 90)"],
      ["5", 'timeout "5": want seconds > 0 (the default is 90)'],
      [null, "timeout null: want seconds > 0 (the default is 90)"],
    ] as const) {
      const e = await caught(() => startServer({ bin, timeout: timeout as never }));
      expect(e, msg).toBeInstanceOf(Error);
      expect((e as Error).message).toBe(msg);
    }
  });
  it.skipIf(!cairnBin())("is given to its client", async () => {
    const dir = tempDir();
    const srv = await startServer({ bin: cairnBin()!, store: dir, timeout: 7 });
    try {
      expect((srv.client as unknown as { timeout: number }).timeout).toBe(7);
      expect((await srv.client.commit("t", {})).step).toBe(1);
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("commitRetries", () => {
  it("refuses one that is no whole number >= 0 before a commit or reply is sent", async () => {
    // null and -1 were taken for no retries, and "2" for 2, without a word.
    const c = new CairnClient({ url });
    for (const [bad, shown] of [[null, "null"], [-1, "-1"], [1.5, "1.5"], ["2", '"2"'], [NaN, "NaN"], [Infinity, "Infinity"]] as const) {
      c.commitRetries = bad as never;
      for (const call of [() => c.commit("s", {}), () => c.reply("s", 1), () => c.ask("s", {}, "q?")]) {
        const e = await caught(call);
        expect(e, shown).toBeInstanceOf(InvalidError);
        expect((e as Error).message).toBe(`cairn: 400 bad_request: commitRetries: want a whole number >= 0, not ${shown}`);
      }
    }
    expect(seen).toBe(0);
    c.commitRetries = 0;
    // Sent: the counting server's 404.
    expect(((await caught(() => c.commit("s", {}))) as Error).message).toBe("cairn: 404 not_found: no such session");
    expect(seen).toBe(1);
    seen = 0;
  });
});
