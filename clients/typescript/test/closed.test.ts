// A call on a client that was closed: said at once, in words, with nothing sent.
import { rmSync } from "node:fs";
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { CairnClient, InvalidError } from "../src/index.js";
import { startServer } from "../src/local.js";
import { cairnBin, required, tempDir } from "./harness.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

/** calls makes one call of each kind on c. */
function calls(c: CairnClient): [string, () => Promise<unknown>][] {
  return [
    ["sessions", () => c.sessions()],
    ["inbox", () => c.inbox()],
    ["head", () => c.head("s")],
    ["step", () => c.step("s", 1)],
    ["commit", () => c.commit("s", { n: 1 })],
    ["patch", () => c.patch("s", [{ op: "add", path: "/m", value: 1 }])],
    ["ask", () => c.ask("s", {}, "q?")],
    ["reply", () => c.reply("s", "yes")],
    ["wait", () => c.wait("s", 0, { timeout: 0 })],
    ["log", () => c.log("s")],
    ["logAll", () => c.logAll("s").next()],
    ["fork", () => c.fork("s", "t")],
    ["diff", () => c.diff("s", "t")],
    ["remove", () => c.remove("s")],
  ];
}

function isClosed(e: unknown, url: string, what: string): void {
  expect(e, what).toBeInstanceOf(InvalidError);
  const err = e as InvalidError;
  expect(err.status).toBe(0);
  expect(err.code).toBe("closed");
  expect(err.message).toBe(`cairn: 0 closed: the client of ${url} is closed (close() was called on it, or on the server startServer() started): nothing was sent; make another to go on`);
}

describe.skipIf(!bin)("a closed client", () => {
  it("says a call after the server startServer() started was closed is on a closed client", async () => {
    // It was UnavailableError "connection refused: is cairn serve
    // running?": the server had been stopped by close(), as asked.
    const dir = tempDir();
    try {
      const srv = await startServer({ bin, store: dir });
      await srv.client.commit("s", { n: 1 });
      await srv.close();
      for (const [what, call] of calls(srv.client)) isClosed(await call().catch((x) => x), srv.url, what);
      expect(srv.client.closed).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("CairnClient.close", () => {
  it("sends nothing once the client is closed, and closing twice is no error", async () => {
    let seen = 0;
    const server = createServer((req, res) => {
      seen++;
      req.resume();
      res.writeHead(404, { "Content-Type": "application/json" }).end('{"code":"not_found","error":"no such session"}');
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const c = new CairnClient({ url });
      expect(await c.head("s")).toBeUndefined();
      expect(seen).toBe(1);
      c.close();
      c.close();
      for (const [what, call] of calls(c)) isClosed(await call().catch((x) => x), url, what);
      expect(seen).toBe(1);
      // One closed client closes no other.
      expect(await new CairnClient({ url }).head("s")).toBeUndefined();
      expect(seen).toBe(2);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe.skipIf(!bin)("a closed client's logAll", () => {
  it("yields no more once the client is closed, not even the rest of a page it read", async () => {
    const dir = tempDir();
    try {
      const srv = await startServer({ bin, store: dir });
      for (let i = 0; i < 3; i++) await srv.client.commit("s", { n: i });
      const it = srv.client.logAll("s", { page: 10 });
      expect((await it.next()).value).toMatchObject({ step: 3 });
      await srv.close();
      isClosed(await it.next().catch((x) => x), srv.url, "logAll after close");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("CairnClient.close under way", () => {
  for (const via of ["node:http", "fetch"] as const) {
    it(`says a call cut off by close() was, not that the server closed the connection (${via})`, async () => {
      // node:http said UnavailableError "the server closed the connection
      // before it answered (did it stop or restart?)"; fetch went on
      // waiting for the answer until the client's timeout.
      let arrived = () => {};
      const server = createServer((req) => {
        req.resume();
        arrived(); // and never answers
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      try {
        for (const [method, call] of [
          ["GET", (c: CairnClient) => c.wait("s", 0, { timeout: 30 })],
          ["POST", (c: CairnClient) => c.commit("s", { n: 1 })],
        ] as const) {
          const c = new CairnClient({ url, timeout: 5, ...(via === "fetch" ? { fetch } : {}) });
          const seen = new Promise<void>((r) => (arrived = r));
          const p = call(c).catch((x) => x);
          await seen;
          c.close();
          const e = await p;
          expect(e, method).toBeInstanceOf(InvalidError);
          expect(e.code).toBe("closed");
          expect(e.status).toBe(0);
          expect(e.message).toBe(
            `cairn: 0 closed: the client of ${url} was closed while the call was under way (close() was called on it, or on the server startServer() started)` +
              (method === "GET" ? "" : "; the request may have taken effect: read the session's head before trying again"),
          );
        }
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    });
  }
});
