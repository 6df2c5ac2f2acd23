// A commit (or a reply) whose answer is lost lands once when sent again with its idempotency key.
import { describe, expect, it } from "vitest";
import { CairnClient, ConflictError, InvalidError, UnavailableError } from "../src/index.js";
import { type LocalServer } from "../src/local.js";
import { cairnBin, required } from "./harness.js";
import { serveForSuite } from "./serve.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

/**
 * losing is a fetch that sends every request, but answers the next `lose`
 * commits (POSTs to .../steps, or to whatever path `route` ends with) with
 * a reset connection once the server has answered them: the answer a
 * worker never hears. sent records the Idempotency-Key of every such POST.
 */
function losing(route = "/steps") {
  const f = {
    lose: 0,
    sent: [] as (string | null)[],
    fetch: (async (url: string | URL | Request, init?: RequestInit) => {
      const r = await fetch(url, init);
      if (init?.method === "POST" && String(url).endsWith(route)) {
        f.sent.push(new Headers(init.headers).get("Idempotency-Key"));
        if (f.lose > 0) {
          f.lose--;
          await r.text();
          throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
        }
      }
      return r;
    }) as typeof fetch,
  };
  return f;
}

describe.skipIf(!bin)("idempotent commits against cairn serve", () => {
  let srv: LocalServer;
  let dir: string;
  serveForSuite(bin!, (s, d) => {
    srv = s;
    dir = d;
  });

  it("sends a commit whose answer was lost again with its key, and it lands once", async () => {
    const f = losing();
    const c = new CairnClient({ url: srv.url, token: srv.token, fetch: f.fetch });
    await c.commit("lost", { n: 1 }); // the server echoes the key: it honours keys
    f.lose = 1;
    const st = await c.commit("lost", { n: 2 }, { record: { turn: 2 }, expect: 1 });
    expect(st.step).toBe(2);
    expect(st.replayed).toBe(true);
    expect(f.sent.length).toBe(3);
    expect(f.sent[1]).toBeTruthy();
    expect(f.sent[2]).toBe(f.sent[1]);
    expect((await srv.client.head("lost", { state: false }))?.step).toBe(2);
  });

  it("does not resend a fresh client's first commit, and gives the key to retry with", async () => {
    // An older server ignores the header: a resend there could write the step twice.
    const f = losing();
    const c = new CairnClient({ url: srv.url, token: srv.token, fetch: f.fetch });
    f.lose = 1;
    const e = await c.commit("first", { n: 1 }, { expect: 0 }).catch((err) => err);
    expect(e).toBeInstanceOf(UnavailableError);
    expect(f.sent.length).toBe(1);
    const key = e.idempotencyKey as string;
    expect(key).toBe(f.sent[0]);
    expect(e.message).toContain(`retry it with idempotencyKey ${JSON.stringify(key)}`);
    const st = await c.commit("first", { n: 1 }, { expect: 0, idempotencyKey: key });
    expect(st.step).toBe(1);
    expect(st.replayed).toBe(true);
    expect((await srv.client.head("first", { state: false }))?.step).toBe(1);
  });

  it("answers a key used for another step with a ConflictError", async () => {
    const c = srv.client;
    await c.commit("reused", { n: 1 }, { idempotencyKey: "k1" });
    const e = await c.commit("reused", { n: 2 }, { idempotencyKey: "k1" }).catch((err) => err);
    expect(e).toBeInstanceOf(ConflictError);
    expect(e.message).toContain('idempotency key "k1" was already used for step 1');
    expect((await c.head("reused", { state: false }))?.step).toBe(1);
  });

  it("refuses a key the server would refuse, before sending", async () => {
    for (const key of ["", "two words", "k".repeat(129), "é"]) {
      const e = await srv.client.commit("bad", {}, { idempotencyKey: key }).catch((err) => err);
      expect(e).toBeInstanceOf(InvalidError);
      expect(e.message).toMatch(/printable ASCII/);
    }
  });

  it("sends a reply whose answer was lost again with its key, and it lands once", async () => {
    // A human's approval landed and its answer was lost: sent again with its
    // key, it is answered with the reply it wrote, not refused as answered.
    const f = losing("/reply");
    const c = new CairnClient({ url: srv.url, token: srv.token, fetch: f.fetch });
    await c.commit("approve", { plan: "deploy" }); // the server echoes the key: it honours keys
    await c.ask("approve", { plan: "deploy" }, "Deploy?", { expect: 1 });
    f.lose = 1;
    const st = await c.reply("approve", { approved: true }, { expect: 2 });
    expect(st.step).toBe(3);
    expect(st.replayed).toBe(true);
    expect(st.record).toEqual({ reply: { approved: true }, in_reply_to: 2 });
    expect(f.sent.length).toBe(2);
    expect(f.sent[0]).toBeTruthy();
    expect(f.sent[1]).toBe(f.sent[0]);
    expect((await srv.client.head("approve", { state: false }))?.step).toBe(3);
  });

  it("gives a fresh client's lost reply the key to retry with", async () => {
    await srv.client.commit("approve2", { plan: "deploy" });
    await srv.client.ask("approve2", { plan: "deploy" }, "Deploy?", { expect: 1 });
    const f = losing("/reply");
    const c = new CairnClient({ url: srv.url, token: srv.token, fetch: f.fetch });
    f.lose = 1;
    const e = await c.reply("approve2", { approved: true }).catch((err) => err);
    expect(e).toBeInstanceOf(UnavailableError);
    const key = e.idempotencyKey as string;
    expect(key).toBe(f.sent[0]);
    expect(e.message).toContain(`the reply may have taken effect: retry it with idempotencyKey ${JSON.stringify(key)}`);
    const st = await srv.client.reply("approve2", { approved: true }, { idempotencyKey: key });
    expect(st.step).toBe(3);
    expect(st.replayed).toBe(true);
    const used = await srv.client.reply("approve2", { approved: false }, { idempotencyKey: key }).catch((err) => err);
    expect(used).toBeInstanceOf(ConflictError);
    expect((await srv.client.head("approve2", { state: false }))?.step).toBe(3);
  });
});
