// The client against a real `cairn serve` that the test starts.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createServer as createHTTPServer } from "node:http";
import { CairnClient, CairnError, ConflictError, InvalidError, LimitError, NotFoundError, StoreRefusedError, UnavailableError, isReply, makePatch } from "../src/index.js";
import { startServer, type LocalServer } from "../src/local.js";
import { cairnBin, freePort, required, tempDir } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

describe.skipIf(!bin)("CairnClient against cairn serve", () => {
  let srv: LocalServer;
  let dir: string;
  serveForSuite(bin!, (s, d) => {
    srv = s;
    dir = d;
  });

  it("commits, reads, fences, forks, diffs, waits, asks, replies and removes", async () => {
    const c = srv.client;
    expect(await c.head("ts")).toBeUndefined();
    const s1 = await c.commit("ts", { plan: ["a"], n: 1 }, { record: { note: "first" }, expect: 0 });
    expect(s1.step).toBe(1);
    expect(s1.parent).toBeNull();
    expect(s1.id).toMatch(/^[0-9a-f]{64}$/);

    const stale = await c.commit("ts", { x: 1 }, { expect: 0 }).catch((e) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale.status).toBe(409);
    expect(stale.head).toBe(1);

    await c.commit("ts", { plan: ["a", "b"], n: 2 }, { expect: 1 });
    const h = await c.head("ts");
    expect(h?.step).toBe(2);
    expect(h?.state).toEqual({ plan: ["a", "b"], n: 2 });
    expect((await c.step("ts", 1)).record).toEqual({ note: "first" });
    expect((await c.head("ts", { state: false }))?.state).toBeUndefined();
    await expect(c.step("ts", 9)).rejects.toBeInstanceOf(NotFoundError);
    const bad = await c.commit("bad name", {}).catch((e) => e);
    expect(bad).toBeInstanceOf(InvalidError);
    expect(bad.code).toBe("bad_request");

    expect((await c.log("ts")).map((s) => s.step)).toEqual([2, 1]);
    expect(await c.log("ts", { limit: 1 })).toHaveLength(1);
    const f = await c.fork("ts", "ts-alt", { step: 1 });
    expect(f.session).toBe("ts-alt");
    expect(f.origin).toBe("ts@1");
    expect((await c.head("ts-alt"))?.state).toEqual({ plan: ["a"], n: 1 });
    expect((await c.diff("ts@1", "ts")).length).toBeGreaterThan(0);
    expect(await c.diff("ts@1", "ts-alt")).toEqual([]);
    expect(new Set((await c.sessions()).map((s) => s.session))).toEqual(new Set(["ts", "ts-alt"]));
    expect((await c.sessions("ts-")).map((s) => s.session)).toEqual(["ts-alt"]);

    expect(await c.wait("ts", 2, { timeout: 0.1 })).toBeUndefined();
    expect((await c.wait("ts", 1, { timeout: 5 }))?.step).toBe(2);

    const q = await c.ask("ts", { plan: ["a", "b"], n: 2 }, "approve plan?", { expect: 2, record: { cost: 3 } });
    expect(q.status).toBe("awaiting_input");
    const inbox = await c.inbox();
    expect(inbox).toHaveLength(1);
    expect(inbox[0].question).toBe("approve plan?");
    // Naming a question that is not the one at the head is a conflict and answers nothing.
    await expect(c.reply("ts", { approved: true }, { expect: 2 })).rejects.toBeInstanceOf(ConflictError);
    expect(await c.inbox()).toHaveLength(1);
    const r = await c.reply("ts", { approved: true }, { expect: 3 });
    expect(isReply(r.record)).toBe(true);
    expect(r.record).toMatchObject({ reply: { approved: true }, in_reply_to: 3 });
    await expect(c.reply("ts", "again")).rejects.toBeInstanceOf(ConflictError);
    expect(await c.inbox()).toEqual([]);

    const removed = await c.remove("ts");
    expect(removed).toEqual({ session: "ts", head: 4, steps: 4 });
    expect(await c.head("ts")).toBeUndefined();
    expect((await c.head("ts-alt"))?.state).toEqual({ plan: ["a"], n: 1 });
    await expect(c.remove("ts")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("keeps a JSON state's structure and text", async () => {
    const doc = { b: 1.5, a: [1, 2, { x: "<é>\u0000" }], nested: { deep: [[[]]] }, n: null };
    await srv.client.commit("json", doc);
    expect((await srv.client.head("json"))?.state).toEqual(doc);
  });

  it("commits a JSON Patch: the same state as the whole document, fenced by expect", async () => {
    const c = srv.client;
    const doc = { messages: [{ role: "user", text: "hi" }], n: 1 };
    await c.commit("p-whole", doc, { expect: 0 });
    await c.commit("p-patch", doc, { expect: 0 });
    const next = { messages: [...doc.messages, { role: "ai", text: "héllo\u2028" }], n: 2, "k<>": 0.5 };
    await c.commit("p-whole", next, { expect: 1 });
    const st = await c.patch(
      "p-patch",
      [
        { op: "add", path: "/messages/-", value: next.messages[1] },
        { op: "replace", path: "/n", value: 2 },
        { op: "add", path: "/k<>", value: 0.5 },
      ],
      { expect: 1, record: { note: "patched" } },
    );
    expect(st.step).toBe(2);
    expect(st.record).toEqual({ note: "patched" });
    const raw = async (s: string) => {
      const r = await fetch(`${srv.url}/v1/sessions/${s}/steps/2`, { headers: { Authorization: "Bearer " + srv.token } });
      const text = await r.text(); // the state, byte for byte as stored, ends the answer
      return text.slice(text.indexOf(',"state":') + 9, text.lastIndexOf("}"));
    };
    expect(await raw("p-patch")).toBe(await raw("p-whole"));
    expect(await raw("p-patch")).toContain('"k<>":0.5');
    expect((await c.head("p-patch"))?.state).toEqual(next);
    // A stale expect is a conflict; a patch that does not apply commits nothing.
    await expect(c.patch("p-patch", [{ op: "replace", path: "/n", value: 3 }], { expect: 1 })).rejects.toBeInstanceOf(ConflictError);
    const bad = await c.patch("p-patch", [{ op: "remove", path: "/nope" }], { expect: 2 }).catch((e) => e);
    expect(bad).toBeInstanceOf(InvalidError);
    expect(bad.message).toContain("op 1");
    expect((await c.head("p-patch", { state: false }))?.step).toBe(2);
  });

  it("makePatch: every patched step stores the bytes of the whole state", async () => {
    const c = srv.client;
    const raw = async (s: string, n: number) => {
      const r = await fetch(`${srv.url}/v1/sessions/${s}/steps/${n}`, { headers: { Authorization: "Bearer " + srv.token } });
      const text = await r.text();
      return text.slice(text.indexOf(',"state":') + 9, text.lastIndexOf("}"));
    };
    const msg = (i: number) => ({ lc: 1, type: "constructor", id: ["AIMessage"], kwargs: { content: `m${i} é ✓ 😀`, n: i / 3 } });
    // A walk through the changes a checkpointer makes, and the awkward ones: members
    // added, removed, reordered and named with escapes; arrays grown, shrunk, emptied;
    // kinds changed; undefined members (an undefined element is refused); -0 and 0.
    const states: unknown[] = [
      { v: 1, msgs: [msg(0)], ch: { a: { version: 1, value: "x" } }, writes: [] },
      { v: 1, msgs: [msg(0), msg(1)], ch: { a: { version: 2, value: "y" }, b: { version: 1, value: [1, 2] } }, writes: [] },
      { v: 1, msgs: [msg(0), msg(1)], ch: { a: { version: 2, value: "y" }, b: { version: 1, value: [1, 2] }, "😀/~": 0 }, writes: [{ t: "t1", value: msg(2) }] },
      { v: 1, msgs: [msg(0), msg(1)], ch: { a: { version: 2, value: "y" }, b: { version: 1, value: [1, 2] }, "😀/~": 0, "line\u2028sep": 1 }, writes: [] },
      { v: 1, msgs: [msg(0), msg(1), msg(2)], ch: { b: { version: 2, value: [1] }, a: { version: 3, value: null } }, writes: [] },
      { v: 2, msgs: [msg(0), { ...msg(1), kwargs: { content: "edited" } }, msg(2)], ch: { b: { version: 2, value: [1] }, "a/b~c": 1, "line\u2028sep": 2, "😀": 3, "q\"": 4, "7": 5 } },
      { v: 2, msgs: [msg(0)], ch: { b: { version: 2, value: [] }, "a/b~c": 2, u: undefined }, extra: [null, 1] },
      { v: "two", msgs: {}, ch: [], extra: [[[]], { x: -0 }] },
      { v: 2, msgs: [msg(3)], ch: {}, extra: [[[1]], { x: 0 }], n: 1e21 },
    ];
    let patched = 0;
    for (const [i, st] of states.entries()) {
      await c.commit("mp-whole", st, { expect: i });
      // The state the patch applies to, as the server holds it and this client reads it (-0 as -0).
      const from = i === 0 ? undefined : (await c.step("mp-whole", i)).state;
      const ops = from === undefined ? undefined : makePatch(from, structuredClone(st));
      if (ops) patched++;
      if (ops) await c.patch("mp-patch", ops, { expect: i });
      else await c.commit("mp-patch", st, { expect: i });
      expect(await raw("mp-patch", i + 1), `step ${i + 1}`).toBe(await raw("mp-whole", i + 1));
    }
    expect(patched).toBe(states.length - 1);
    expect(makePatch({ a: 1 }, [1])).toBeUndefined();
    expect(makePatch({ a: [] }, { a: [1, 2, 3] }, { maxOps: 2 })).toBeUndefined();
    // Equal parts of the new state become the old state's, so a cache of both keeps one.
    const a = { msgs: [msg(0)], n: 1 };
    const b = { msgs: [msg(0), msg(1)], n: 2 };
    expect(makePatch(a, b)).toEqual([
      { op: "add", path: "/msgs/-", value: msg(1) },
      { op: "replace", path: "/n", value: 2 },
    ]);
    expect(b.msgs[0]).toBe(a.msgs[0]);
  });

  it("refuses a wrong token, and says so in a CairnError", async () => {
    const other = new CairnClient({ url: srv.url, token: "nope" });
    const e = await other.sessions().catch((x) => x);
    expect(e).toBeInstanceOf(CairnError);
    expect(e.status).toBe(401);
    expect(e.code).toBe("unauthorized");
  });

  it("maps 413 onto LimitError", async () => {
    const small = await startServer({ bin, store: tempDir() });
    try {
      // cairn serve --max-body is not set here; the reply limit of the API applies.
      await small.client.ask("big", {}, "q");
      const e = await small.client.reply("big", "x".repeat(2 << 20)).catch((x) => x);
      expect(e).toBeInstanceOf(LimitError);
      expect(e.status).toBe(413);
    } finally {
      await small.close();
    }
  });
  it("maps a store the server cannot reach onto UnavailableError, in words", async () => {
    // Nothing listens at the store's port: 503 code "unavailable", which
    // used to be 500 "internal" with the SDK's text and a store key.
    const port = await freePort();
    const store = `minio://127.0.0.1:${port}/bkt/ws?secure=false&attempts=1`;
    const down = await startServer({ bin, store, env: { AWS_ACCESS_KEY_ID: "cairn-test", AWS_SECRET_ACCESS_KEY: "cairn-test-secret" } });
    try {
      const e = await down.client.commit("s", { n: 1 }).catch((x) => x);
      expect(e).toBeInstanceOf(UnavailableError);
      expect(e).toBeInstanceOf(CairnError);
      expect(e.status).toBe(503);
      expect(e.code).toBe("unavailable");
      expect(e.message).toContain(`the store ${store} could not be reached (connection refused`);
      expect(e.message).toMatch(/the step was not written$/);
      expect(e.message).not.toMatch(/steps\/|dial tcp|operation error/);
    } finally {
      await down.close();
    }
  });

  it("maps a store that refuses the server onto StoreRefusedError, in words", async () => {
    // An S3 server that accepts none of the server's credentials: 502
    // code "store_refused", which was 500 "internal", a broken server
    // to a client and an invitation to retry.
    const s3 = createHTTPServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(403, { "Content-Type": "application/xml" });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code><Message>no such key</Message></Error>');
      });
    });
    await new Promise<void>((r) => s3.listen(0, "127.0.0.1", r));
    const port = (s3.address() as { port: number }).port;
    const store = `minio://127.0.0.1:${port}/bkt/ws?secure=false&attempts=1`;
    const refused = await startServer({ bin, store, env: { AWS_ACCESS_KEY_ID: "cairn-test", AWS_SECRET_ACCESS_KEY: "cairn-test-secret" } });
    try {
      for (const c of [refused.client, new CairnClient({ url: refused.url, token: refused.token, fetch })]) {
        const e = await c.commit("s", { n: 1 }).catch((x) => x);
        expect(e).toBeInstanceOf(StoreRefusedError);
        expect(e).toBeInstanceOf(CairnError);
        expect(e).not.toBeInstanceOf(UnavailableError);
        expect(e.status).toBe(502);
        expect(e.code).toBe("store_refused");
        expect(e.message).toContain(`the store ${store} refused the request: the credentials were not accepted`);
        expect(e.message).toMatch(/the step was not written$/);
        expect(e.message).not.toMatch(/steps\/|InvalidAccessKeyId|operation error/);
        const l = await c.sessions().catch((x) => x);
        expect(l).toBeInstanceOf(StoreRefusedError);
        expect(l.message).toMatch(/could not list the sessions$/);
      }
    } finally {
      await refused.close();
      await new Promise<void>((r) => s3.close(() => r()));
    }
  });

  it("refuses the session names '.' and '..' as InvalidError, through node:http and fetch", async () => {
    // A URL would resolve them as dot segments and send the request to
    // another route (GET /v1/head: a 404 that head reads as "no session").
    for (const c of [srv.client, new CairnClient({ url: srv.url, token: srv.token, fetch })]) {
      for (const name of [".", ".."]) {
        for (const call of [() => c.head(name), () => c.step(name, 1), () => c.commit(name, {}), () => c.log(name), () => c.remove(name), () => c.fork("ts", name)]) {
          const e = await call().catch((x) => x);
          expect(e, `${name}: ${call}`).toBeInstanceOf(InvalidError);
          expect(e.code).toBe("bad_request");
        }
      }
    }
  });

  it("sends its requests over one kept-alive connection", async () => {
    // A relay in front of the real server counts the connections made to it.
    const target = new URL(srv.url);
    let connections = 0;
    const sockets: Socket[] = [];
    const relay = createServer((down) => {
      connections++;
      const up = connect(Number(target.port), target.hostname);
      sockets.push(down, up);
      down.pipe(up).pipe(down);
      down.on("error", () => up.destroy());
      up.on("error", () => down.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
    try {
      const port = (relay.address() as { port: number }).port;
      const c = new CairnClient({ url: `http://127.0.0.1:${port}`, token: srv.token });
      for (let i = 1; i <= 20; i++) await c.commit("keepalive", { i }, { expect: i - 1 });
      expect((await c.head("keepalive"))?.state).toEqual({ i: 20 });
      expect(await c.step("keepalive", 99).catch((e) => e)).toBeInstanceOf(NotFoundError);
      expect((await c.head("keepalive"))?.step).toBe(20);
      expect(connections).toBe(1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => relay.close(r));
    }
  });
});

describe("openapi.ts", () => {
  it("is what openapi-typescript makes of internal/httpapi/openapi.json", () => {
    const fresh = execFileSync("node_modules/.bin/openapi-typescript", ["../../internal/httpapi/openapi.json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const committed = readFileSync("src/openapi.ts", "utf8");
    expect(committed.trim()).toBe(fresh.trim());
  });
});

describe("CairnClient's own transport", () => {
  for (const transport of ["node:http", "fetch"] as const) {
    it(`gives up on a server that does not answer within its timeout (${transport})`, async () => {
      // Through fetch, the timeout's DOMException (whose code is the number
      // 23) came out as "TypeError: code?.startsWith is not a function".
      // A listener that takes connections and never answers.
      const held: Socket[] = [];
      const mute: Server = createServer((s) => void held.push(s));
      await new Promise<void>((r) => mute.listen(0, "127.0.0.1", r));
      try {
        const port = (mute.address() as { port: number }).port;
        const c = new CairnClient({ url: `http://127.0.0.1:${port}`, token: "t", timeout: 0.2, fetch: transport === "fetch" ? fetch : undefined });
        const e = await c.sessions().catch((err) => err);
        expect(e).toBeInstanceOf(UnavailableError);
        expect(e.code).toBe("unreachable");
        expect(e.message).toBe(`cairn: 0 unreachable: could not reach the cairn server at http://127.0.0.1:${port}: no answer within 0.2 s`);
        // A commit that got no answer may have reached the server.
        const w = await c.commit("s", { n: 1 }).catch((err) => err);
        expect(w).toBeInstanceOf(UnavailableError);
        expect(w.message).toMatch(/no answer within 0\.2 s; the commit may have taken effect: retry it with idempotencyKey "[-0-9a-f]{36}", which answers with its step if it landed and never writes a second one$/);
      } finally {
        for (const s of held) s.destroy();
        await new Promise((r) => mute.close(r));
      }
    });

    it(`honours a timeout longer than a timer can hold, not failing at once (${transport})`, async () => {
      // Past 2^31-1 ms (24.8 days), Node's timers fire after 1 ms: every
      // request failed at once, "no answer within 3000000 s".
      const held: Socket[] = [];
      const slow: Server = createServer((s) => {
        held.push(s);
        s.once("data", () => setTimeout(() => s.end("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"sessions\":[]}"), 50));
      });
      await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
      try {
        const port = (slow.address() as { port: number }).port;
        for (const timeout of [3e6, 1e300]) {
          const c = new CairnClient({ url: `http://127.0.0.1:${port}`, timeout, fetch: transport === "fetch" ? fetch : undefined });
          expect(await c.sessions()).toEqual([]);
        }
      } finally {
        for (const s of held) s.destroy();
        await new Promise((r) => slow.close(r));
      }
    });
  }

  it("says a server that is not there is unreachable, and that nothing was sent", async () => {
    // It used to throw Node's own error (ECONNREFUSED), none of the client's classes.
    const port = await freePort();
    const c = new CairnClient({ url: `http://127.0.0.1:${port}`, token: "t" });
    const e = await c.commit("s", { n: 1 }).catch((err) => err);
    expect(e).toBeInstanceOf(UnavailableError);
    expect(e).toBeInstanceOf(CairnError);
    expect(e.status).toBe(0);
    expect(e.message).toBe(
      `cairn: 0 unreachable: could not reach the cairn server at http://127.0.0.1:${port}: connection refused: is cairn serve running, and is the port in the URL right?; nothing was sent`,
    );
  });

  for (const transport of ["node:http", "fetch"] as const) {
    it(`says a server that hangs up mid-call closed the connection, in words (${transport})`, async () => {
      // A server killed mid-call: the message was Node's "ECONNRESET".
      const hangUp: Server = createServer((s) => s.once("data", () => s.destroy()));
      await new Promise<void>((r) => hangUp.listen(0, "127.0.0.1", r));
      try {
        const port = (hangUp.address() as { port: number }).port;
        const c = new CairnClient({ url: `http://127.0.0.1:${port}`, fetch: transport === "fetch" ? fetch : undefined });
        const g = await c.sessions().catch((err) => err);
        expect(g).toBeInstanceOf(UnavailableError);
        expect(g.message).toBe(
          `cairn: 0 unreachable: could not reach the cairn server at http://127.0.0.1:${port}: the server closed the connection before it answered (did it stop or restart?)`,
        );
        const w = await c.commit("s", { n: 1 }).catch((err) => err);
        expect(w.message).toMatch(/before it answered \(did it stop or restart\?\); the commit may have taken effect: retry it with idempotencyKey "[-0-9a-f]{36}", which answers with its step if it landed and never writes a second one$/);
      } finally {
        await new Promise((r) => hangUp.close(r));
      }
    });
  }

  it("refuses a timeout that is no positive number", () => {
    // NaN or a negative timeout made every request give up at once ("no
    // answer within NaN s"); Python's socket refused them at the first call.
    for (const timeout of [0, -1, NaN, Infinity, "10" as unknown as number]) {
      expect(() => new CairnClient({ url: "http://127.0.0.1:7474", timeout })).toThrow(/want seconds > 0 \(the default is 90\)$/);
    }
  });

  it("refuses a URL it cannot send to", () => {
    expect(() => new CairnClient({ url: "ftp://127.0.0.1:1" })).toThrow(/want http:\/\/HOST:PORT or https:\/\/HOST:PORT/);
    expect(() => new CairnClient({ url: "127.0.0.1:8080" })).toThrow(/server URL "127.0.0.1:8080": want http:\/\//);
  });
});
