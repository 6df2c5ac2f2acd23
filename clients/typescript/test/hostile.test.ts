// What a hostile caller gets: bad names, steps that are no whole numbers,
// states JSON cannot carry, answers the Python client maps to a kind.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CairnClient, CairnError, ConflictError, InvalidError, LimitError, NotFoundError, UnauthorizedError, UnavailableError, UnreadableSessionsWarning } from "../src/index.js";
import { startServer, type LocalServer } from "../src/local.js";
import { cairnBin, required, tempDir } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

describe.skipIf(!bin)("hostile calls against cairn serve", () => {
  let srv: LocalServer;
  let dir: string;
  serveForSuite(bin!, (s, d) => {
    srv = s;
    dir = d;
  });

  it("says what is wrong with a session name, the empty one too", async () => {
    // "" used to come back as "path /v1/sessions//steps: empty, '.' and
    // '..' segments are not taken": the route, not the name.
    const c = srv.client;
    // A name of 100,000 characters was the server's plain "431 Request
    // Header Fields Too Large".
    for (const name of ["", ".", "..", ".x", "a/b", "ü", "a\0b", "a".repeat(129), "a b", "a".repeat(100_000)]) {
      for (const call of [() => c.commit(name, {}), () => c.head(name), () => c.step(name, 1), () => c.log(name), () => c.remove(name), () => c.fork("s", name)]) {
        const e = await call().catch((x) => x);
        expect(e, JSON.stringify(name)).toBeInstanceOf(InvalidError);
        expect(e.status).toBe(400);
        const shown = name.length > 128 ? `"${"a".repeat(32)}…" (${name.length} characters)` : JSON.stringify(name).replace("\\u0000", "\\x00");
        // (fork's is said of its field: "to: session ...")
        expect(e.message).toMatch(/^cairn: 400 bad_request: (to: )?session /);
        expect(e.message).toContain(`session ${shown}: want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'`);
      }
    }
  });

  it("refuses a session name that is no string with a TypeError, as the Python client does, writing nothing", async () => {
    // undefined was "Cannot read properties of undefined (reading 'length')";
    // a number was taken for its text: commit(5, ...) wrote session "5".
    const c = srv.client;
    for (const [bad, shown] of [[undefined, "undefined"], [null, "null"], [5, "5"], [{ name: "x" }, "an object"], [["x"], "an object"]] as [unknown, string][]) {
      const name = bad as string;
      for (const [call, what] of [
        [() => c.commit(name, { a: 1 }), "session"],
        [() => c.head(name), "session"],
        [() => c.step(name, 1), "session"],
        [() => c.log(name), "session"],
        [() => c.wait(name, 0, { timeout: 0 }), "session"],
        [() => c.ask(name, {}, "q?"), "session"],
        [() => c.reply(name, "yes"), "session"],
        [() => c.remove(name), "session"],
        [() => c.fork(name, "copy"), "session"],
        [() => c.fork("a", name), "to"],
      ] as const) {
        const e = await call().catch((x) => x);
        expect(e, `${what} ${shown}`).toBeInstanceOf(TypeError);
        expect(e.message).toBe(`${what}: want a session's name (a string), not ${shown}`);
      }
    }
    expect((await c.sessions()).map((s) => s.session)).not.toContain("5");
  });

  it("says half a surrogate pair in a session name is a bad name, as the Python client does", async () => {
    // encodeURIComponent threw its URIError ("URI malformed").
    const c = srv.client;
    await c.commit("a", {});
    const want = "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'";
    for (const [call, msg] of [
      [() => c.commit("a\ud800", {}), `session "a\\ud800": ${want}`],
      [() => c.head("a\ud800"), `session "a\\ud800": ${want}`],
      [() => c.sessions("\ud800"), `prefix: "\ufffd" is not the start of a session name: ${want}`],
      [() => c.diff("a", "a\ud800"), `b: session "a\ufffd": ${want}`],
      [() => c.fork("a", "b\ud800"), `to: session "b\ufffd": ${want}`],
    ] as const) {
      const e = await call().catch((x) => x);
      expect(e).toBeInstanceOf(InvalidError);
      expect(e.message).toBe(`cairn: 400 bad_request: ${msg}`);
    }
  });

  it("refuses step numbers that are no whole numbers, never rounding or dropping them", async () => {
    // expect: NaN went out as null, which is no expect at all: the
    // commit landed unfenced.
    const c = srv.client;
    await c.commit("n", { n: 1 }, { expect: 0 });
    for (const bad of [NaN, Infinity, -Infinity, 1.5, "1" as unknown as number, null as unknown as number]) {
      // null is a step only where one is required: an option given as
      // null is left out, as Python's None (null-options.test.ts).
      const required = [() => c.step("n", bad), () => c.wait("n", bad, { timeout: 0.1 })];
      const optional = [
        () => c.commit("n", { n: 2 }, { expect: bad }),
        () => c.patch("n", [{ op: "add", path: "/m", value: 1 }], { expect: bad }),
        () => c.fork("n", "n-f", { step: bad }),
        () => c.reply("n", 1, { expect: bad }),
        () => c.log("n", { from: bad }),
        () => c.log("n", { limit: bad }),
      ];
      const calls = bad === null ? required : [...required, ...optional];
      for (const call of calls) {
        const e = await call().catch((x) => x);
        expect(e, String(bad)).toBeInstanceOf(InvalidError);
        expect(e.message).toContain(`want a whole number, not ${typeof bad === "string" ? JSON.stringify(bad) : String(bad)}`);
      }
    }
    expect((await c.head("n"))?.step).toBe(1);
    expect(await c.head("n-f")).toBeUndefined();
  });

  it("refuses step numbers past 2^53, which a number cannot hold exactly, never sending another", async () => {
    // step(s, 2**60) asked for step 1152921504606847000, not 2**60.
    const c = srv.client;
    await c.commit("big", { n: 1 });
    for (const bad of [2 ** 60, -(2 ** 60), Number.MAX_SAFE_INTEGER + 1]) {
      for (const call of [() => c.step("big", bad), () => c.commit("big", {}, { expect: bad }), () => c.log("big", { from: bad }), () => c.wait("big", bad, { timeout: 0 })]) {
        const e = await call().catch((x) => x);
        expect(e, String(bad)).toBeInstanceOf(InvalidError);
        expect(e.message).toContain(`want a whole number from -(2^53-1) to 2^53-1, which a JavaScript number holds exactly, not ${BigInt(bad)}`);
      }
    }
    expect((await c.head("big"))?.step).toBe(1);
  });

  it("says a wait timeout that is no number is InvalidError, naming it as the Python client does", async () => {
    // "1" was shown as 1: "timeout: want seconds >= 0, not 1".
    for (const [bad, shown] of [["1", '"1"'], [NaN, "NaN"], [-1, "-1"]] as [unknown, string][]) {
      const e = await srv.client.wait("n", 1, { timeout: bad as number }).catch((x) => x);
      expect(e).toBeInstanceOf(InvalidError);
      expect(e.message).toBe(`cairn: 400 bad_request: timeout: want seconds >= 0, not ${shown}`);
    }
  });

  it("says a state nested too deep to encode is InvalidError, as the server says of one it refuses", async () => {
    // JSON.stringify's RangeError (its call stack) used to come out as it was.
    const c = srv.client;
    for (const depth of [600, 100_000]) {
      const doc: unknown[] = [];
      let inner = doc;
      for (let i = 0; i < depth; i++) {
        const next: unknown[] = [];
        inner.push(next);
        inner = next;
      }
      const e = await c.commit("deep", doc).catch((x) => x);
      expect(e, String(depth)).toBeInstanceOf(InvalidError);
      expect(e.message).toMatch(/nested too deep/);
    }
    expect(await c.head("deep")).toBeUndefined();
  });

  it("refuses NaN, infinities, Maps and Sets, naming the field, as the Python client does, and commits nothing", async () => {
    // JSON.stringify sent NaN and the infinities as null and a Map or a
    // Set as {}: the step landed with a state other than the one given.
    const c = srv.client;
    await c.ask("nan", { n: 1 }, "go?", { expect: 0 });
    for (const bad of [NaN, Infinity, -Infinity]) {
      for (const [call, field] of [
        [() => c.commit("nan", { n: [1, { x: bad }] }), "state"],
        [() => c.commit("nan", { n: 1 }, { record: { cost: bad } }), "record"],
        [() => c.patch("nan", [{ op: "replace", path: "/n", value: bad }]), "patch"],
        [() => c.reply("nan", { score: bad }), "input"],
      ] as const) {
        const e = await call().catch((x) => x);
        expect(e, `${field} ${bad}`).toBeInstanceOf(InvalidError);
        // Named by its place, as a Map's is: in a patch, its place in the patch.
        const at = field === "state" ? " at /n/1/x" : field === "record" ? " at /cost" : field === "patch" ? " at /0/value" : " at /score";
        expect(e.message).toBe(`cairn: 400 bad_request: ${field}: the value${at} is ${bad}, which JSON has no number for (JSON.stringify would send it as null): send null or a string instead`);
      }
    }
    for (const [bad, kind] of [[new Map([["a", 1]]), "Map"], [new Set([1]), "Set"]] as const) {
      const e = await c.commit("nan", { n: [bad] }).catch((x) => x);
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toMatch(new RegExp(`^state: the value at /n/0 is a ${kind}, which has no JSON form \\(JSON.stringify would send it as \\{\\}\\)`));
    }
    const head = await c.head("nan");
    expect(head?.step).toBe(1);
    expect(head?.state).toEqual({ n: 1 });
  });

  it("sends half a surrogate pair escaped, and gets the server's InvalidError naming the field", async () => {
    const c = srv.client;
    const e = await c.commit("sur", { t: "a\udc00b" }).catch((x) => x);
    expect(e).toBeInstanceOf(InvalidError);
    expect(e.message).toMatch(/state: the escape \\udc00 .* half of a UTF-16 surrogate pair/);
    await c.commit("sur", { t: "\ud83d\ude00" });
    expect((await c.head("sur"))?.state).toEqual({ t: "😀" });
  });

  it("lets exactly one of two clients win a race for a step; the other gets ConflictError with the head", async () => {
    const a = new CairnClient({ url: srv.url, token: srv.token });
    const b = new CairnClient({ url: srv.url, token: srv.token });
    await a.commit("race", { n: 0 }, { expect: 0 });
    for (let round = 1; round <= 10; round++) {
      const got = await Promise.allSettled([a.commit("race", { by: "a" }, { expect: round }), b.commit("race", { by: "b" }, { expect: round })]);
      const won = got.filter((g) => g.status === "fulfilled");
      const lost = got.filter((g): g is PromiseRejectedResult => g.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0].reason).toBeInstanceOf(ConflictError);
      expect(lost[0].reason.head).toBe(round + 1);
    }
  });

  for (const transport of ["node:http", "fetch"] as const) {
    it(`says https:// to a plain HTTP server failed its handshake, and that nothing was sent (${transport})`, async () => {
      // It was "EPROTO" (or "ERR_SSL_WRONG_VERSION_NUMBER") and "the
      // request may have taken effect", though a failed handshake sends nothing.
      const url = srv.url.replace("http://", "https://");
      const c = new CairnClient({ url, token: srv.token, fetch: transport === "fetch" ? fetch : undefined });
      const e = await c.commit("tls", { n: 1 }).catch((x) => x);
      expect(e).toBeInstanceOf(UnavailableError);
      expect(e.message).toBe(
        `cairn: 0 unreachable: could not reach the cairn server at ${url}: the TLS handshake failed: does the server speak https? (cairn serve speaks http://); nothing was sent`,
      );
      expect(await srv.client.head("tls")).toBeUndefined();
    });
  }

  it("pages a long history across a fork with logAll", async () => {
    // Below its fork point a fork's history is the fork's: log("pb",
    // {from: 2}) reads pa@2 and below, and logAll pages on under pb's
    // name, also once pa is removed (it went on under pa's: a NotFoundError).
    const c = srv.client;
    for (let i = 1; i <= 7; i++) await c.commit("pa", { i });
    await c.fork("pa", "pb", { step: 4 });
    for (let i = 5; i <= 9; i++) await c.commit("pb", { i });
    const want = [9, 8, 7, 6, 5, 4].map((n) => `pb@${n}`).concat([3, 2, 1].map((n) => `pa@${n}`));
    for (const page of [1, 2, 3, 4, 9, 10, 1000]) {
      const got: string[] = [];
      for await (const st of c.logAll("pb", { page })) got.push(`${st.session}@${st.step}`);
      expect(got, String(page)).toEqual(want);
    }
    expect((await c.log("pb", { limit: 3, from: 2 })).map((st) => `${st.session}@${st.step}`)).toEqual(["pa@2", "pa@1"]);
    await c.remove("pa");
    for (const page of [1, 2, 3, 1000]) {
      const got: string[] = [];
      for await (const st of c.logAll("pb", { page })) got.push(`${st.session}@${st.step}`);
      expect(got, String(page)).toEqual(want);
    }
    await expect(c.log("pa", { limit: 3, from: 2 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(c.logAll("pb", { page: 0 }).next()).rejects.toBeInstanceOf(InvalidError);
  });

  it("ends logAll at a pruned history's oldest step and at a first step above 1", async () => {
    // A page that ended exactly at such a step used to ask for the step
    // below it: a NotFoundError ("pruned", or a removed session's past).
    const c = srv.client;
    for (let i = 1; i <= 6; i++) await c.commit("pp", { i });
    execFileSync(bin!, ["--store", dir, "prune", "pp", "--keep-last", "4"]);
    const log = await c.log("pp");
    expect(log.map((st) => st.step)).toEqual([6, 5, 4, 3]);
    expect(log.map((st) => st.truncated ?? false)).toEqual([false, false, false, true]);
    for (const page of [1, 2, 3, 4, 5, 1000]) {
      const got: number[] = [];
      for await (const st of c.logAll("pp", { page })) got.push(st.step);
      expect(got, String(page)).toEqual([6, 5, 4, 3]);
    }
    await c.remove("pp");
    for (let i = 1; i <= 2; i++) await c.commit("pp", { again: i });
    const again = (await c.log("pp")).map((st) => st.step);
    expect(again[again.length - 1]).toBeGreaterThan(1);
    for (const page of [1, 2, 1000]) {
      const got: number[] = [];
      for await (const st of c.logAll("pp", { page })) got.push(st.step);
      expect(got, String(page)).toEqual(again);
    }
  });

  it("maps a state over --max-body onto LimitError, whatever its size", async () => {
    const d = tempDir();
    const child = spawn(bin!, ["--store", d, "serve", "--listen", "127.0.0.1:0", "--max-body", "100000"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const url = await new Promise<string>((res) => child.stdout!.on("data", (b) => { const m = /cairn serve: (http:\/\/\S+)/.exec(String(b)); if (m) res(m[1]); }));
      const c = new CairnClient({ url });
      for (const size of [200_000, 20_000_000]) {
        const e = await c.commit("big", { t: "x".repeat(size) }).catch((x) => x);
        expect(e, String(size)).toBeInstanceOf(LimitError);
        expect(e.code).toBe("too_large");
      }
      expect((await c.commit("big", { t: "small" }, { expect: 0 })).step).toBe(1);
    } finally {
      child.kill();
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("error kinds, as the Python client has them", () => {
  let answer: { status: number; body: string };
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(answer.status, { "Content-Type": "application/json" });
      res.end(answer.body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it("maps 401 and 403 onto UnauthorizedError and 422 onto LimitError", async () => {
    // They used to be plain CairnErrors here, and UnauthorizedError and
    // LimitError in Python.
    const c = new CairnClient({ url });
    for (const [status, code, kind] of [
      [401, "unauthorized", UnauthorizedError],
      [403, "forbidden", UnauthorizedError],
      [422, "limit", LimitError],
    ] as const) {
      answer = { status, body: JSON.stringify({ code, error: "in words" }) };
      const e = await c.sessions().catch((x) => x);
      expect(e).toBeInstanceOf(kind);
      expect(e).toBeInstanceOf(CairnError);
      expect(e.status).toBe(status);
      expect(e.code).toBe(code);
      expect(e.message).toBe(`cairn: ${status} ${code}: in words`);
    }
  });
});

describe.skipIf(!bin)("a store holding a damaged session", () => {
  it("lists the others and warns, naming it, as the Python client does", async () => {
    // The listing's "unreadable" was dropped: nothing told the caller a
    // session was passed over (Python warns with UnreadableSessionsWarning).
    const dir = tempDir();
    let srv = await startServer({ bin, store: dir });
    for (const name of ["a", "d"]) {
      await srv.client.commit(name, { i: 1 });
      await srv.client.commit(name, { i: 2 });
    }
    await srv.client.ask("q", { i: 1 }, "go on?");
    await srv.close();
    const step = join(dir, "steps", "d", "00000000000000000002");
    const b = readFileSync(step);
    b[b.length >> 1] ^= 0x40;
    writeFileSync(step, b);
    srv = await startServer({ bin, store: dir });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      expect((await srv.client.sessions()).map((x) => x.session)).toEqual(["a", "q"]);
      expect((await srv.client.inbox()).map((x) => x.session)).toEqual(["q"]);
      await new Promise((r) => setImmediate(r));
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toBeInstanceOf(UnreadableSessionsWarning);
      expect(warnings[0].message).toBe("cairn: 1 session(s) could not be read (damage in the store): d");
      expect((warnings[0] as UnreadableSessionsWarning).unreadable[0].session).toBe("d");
    } finally {
      process.off("warning", onWarning);
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
