// Cancelling a call with an AbortSignal, and waits longer than the
// server holds one poll.
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CairnClient, InvalidError } from "../src/index.js";
import { startServer, type LocalServer } from "../src/local.js";
import { cairnBin, required, tempDir } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

describe.skipIf(!bin)("AbortSignal against cairn serve", () => {
  let srv: LocalServer;
  let dir: string;
  serveForSuite(bin!, (s, d) => {
    srv = s;
    dir = d;
  });

  for (const transport of ["node:http", "fetch"] as const) {
    it(`takes one signal for many calls at once without warning of a leak (${transport})`, async () => {
      // Through node:http, the 11th call at once on one signal printed
      // "MaxListenersExceededWarning: Possible EventTarget memory leak
      // detected", though each call removes its listener when it ends.
      const warnings: string[] = [];
      const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
      process.on("warning", onWarning);
      try {
        const c = new CairnClient({ url: srv.url, token: srv.token, fetch: transport === "fetch" ? fetch : undefined });
        const shutdown = new AbortController();
        const steps = await Promise.all(Array.from({ length: 30 }, (_, i) => c.commit(`many-${transport === "fetch" ? "fetch" : "http"}-${i}`, { i }, { signal: shutdown.signal })));
        expect(steps.map((s) => s.step)).toEqual(Array(30).fill(1));
        await new Promise((r) => setImmediate(r));
      } finally {
        process.off("warning", onWarning);
      }
      expect(warnings).toEqual([]);
    });

    it(`stops a long-poll when its signal aborts, with the signal's reason (${transport})`, async () => {
      // There was no way to cancel a call: a wait held its caller for its
      // whole timeout.
      const c = new CairnClient({ url: srv.url, token: srv.token, fetch: transport === "fetch" ? fetch : undefined });
      await c.commit(`w-${transport === "fetch" ? "fetch" : "http"}`, { n: 1 });
      const ac = new AbortController();
      const t0 = Date.now();
      setTimeout(() => ac.abort(), 200);
      const e = await c.wait(`w-${transport === "fetch" ? "fetch" : "http"}`, 1, { timeout: 30, signal: ac.signal }).catch((x) => x);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(e).toBeInstanceOf(DOMException);
      expect(e.name).toBe("AbortError");
      // A reason of the caller's own comes back as it is.
      const mine = new Error("user pressed stop");
      const e2 = await c.head(`w-${transport === "fetch" ? "fetch" : "http"}`, { signal: AbortSignal.abort(mine) }).catch((x) => x);
      expect(e2).toBe(mine);
      // The client goes on working.
      expect((await c.head(`w-${transport === "fetch" ? "fetch" : "http"}`))?.step).toBe(1);
      expect((await c.commit(`w-${transport === "fetch" ? "fetch" : "http"}`, { n: 2 }, { expect: 1, signal: new AbortController().signal })).step).toBe(2);
    });
  }
});

describe.skipIf(!bin)("AbortSignal on Node without AbortSignal.any (before 20.3)", () => {
  it("still cancels a call made through fetch", async () => {
    // The fetch transport combined the caller's signal and its timeout
    // with AbortSignal.any: a TypeError on Node 20.0 to 20.2.
    const dir = tempDir();
    const srv = await startServer({ bin, store: dir });
    const any = AbortSignal.any;
    (AbortSignal as { any?: unknown }).any = undefined;
    try {
      const c = new CairnClient({ url: srv.url, token: srv.token, fetch });
      await c.commit("w", { n: 1 });
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      const e = await c.wait("w", 1, { timeout: 30, signal: ac.signal }).catch((x) => x);
      expect(e.name).toBe("AbortError");
      // A signal that never aborts lets the call through.
      expect((await c.commit("w", { n: 2 }, { expect: 1, signal: new AbortController().signal })).step).toBe(2);
    } finally {
      AbortSignal.any = any;
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("wait against a server that ends polls early", () => {
  let server: Server;
  let url: string;
  const timeouts: number[] = [];
  beforeAll(async () => {
    // Its long-polls end after at most 0.3 s with 204, as cairn serve's
    // end after at most 60 s.
    server = createServer((req, res) => {
      const t = Number(new URL(req.url!, "http://x").searchParams.get("timeout"));
      timeouts.push(t);
      setTimeout(() => {
        res.writeHead(204);
        res.end();
      }, Math.min(t, 0.3) * 1000);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("polls again until its own timeout passes", async () => {
    // wait({timeout: 1.2}) used to give up when the first poll ended:
    // a wait of an hour ended after a minute.
    timeouts.length = 0;
    const c = new CairnClient({ url });
    const t0 = Date.now();
    expect(await c.wait("s", 1, { timeout: 1.2 })).toBeUndefined();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1150);
    // It polled again; how many times depends on the machine's speed.
    expect(timeouts.length).toBeGreaterThanOrEqual(2);
    expect(timeouts[0]).toBe(1.2);
    expect(Math.max(...timeouts)).toBeLessThanOrEqual(1.2);
  });

  it("ends when its timeout has passed, though the clock is set back meanwhile", async () => {
    // The deadline was on the wall clock (Date.now): a clock set back by
    // 5 s (NTP, a VM resumed) during wait({timeout: 0.6}) made it poll on
    // for 5 s more.
    timeouts.length = 0;
    const c = new CairnClient({ url });
    const real = Date.now.bind(Date);
    const now = vi.spyOn(Date, "now").mockImplementation(() => real() - (timeouts.length > 0 ? 5000 : 0));
    try {
      const t0 = performance.now();
      expect(await c.wait("s", 1, { timeout: 0.6 })).toBeUndefined();
      const took = performance.now() - t0;
      expect(took).toBeGreaterThanOrEqual(550);
      // Polling on for the 5 s the clock went back would take 5.6 s; the
      // bound says that, not how fast a loaded machine answers.
      expect(took).toBeLessThan(5000);
    } finally {
      now.mockRestore();
    }
  });

  it("waits a timeout that is no whole number of milliseconds through fetch", async () => {
    // fetch's AbortSignal.timeout takes whole milliseconds: a wait of
    // 0.1234 s through fetch failed at once, "unreachable: ERR_OUT_OF_RANGE".
    timeouts.length = 0;
    const c = new CairnClient({ url, fetch });
    expect(await c.wait("s", 1, { timeout: 0.1234 })).toBeUndefined();
    expect(timeouts[0]).toBe(0.123);
  });

  it("asks the server for at most a minute a poll, and 0 once", async () => {
    timeouts.length = 0;
    const c = new CairnClient({ url });
    const ac = new AbortController();
    const w = c.wait("s", 1, { timeout: 1e12, signal: ac.signal }).catch((x) => x);
    await new Promise((r) => setTimeout(r, 100));
    ac.abort();
    expect((await w).name).toBe("AbortError");
    expect(timeouts[0]).toBe(60);
    timeouts.length = 0;
    expect(await c.wait("s", 1, { timeout: 0 })).toBeUndefined();
    expect(timeouts).toEqual([0]);
    await expect(c.wait("s", 1, { timeout: -1 })).rejects.toBeInstanceOf(InvalidError);
  });
});
