// A thread's newest checkpoints cost what they are, not the thread's
// history: list(config, {limit: 1}) and getTuple of a checkpoint just below
// the head read the thread's heads and, at most, a page of one branch's
// log, on a thread of 200 checkpoints (each with pending writes) and a
// few time-travel branches, with a fresh saver, as in another process.
// And list still yields every checkpoint of every branch, newest first by
// id, with before and limit as LangGraph's contract wants.
import { rmSync } from "node:fs";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CairnClient } from "@cairnlog/client";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { CairnSaver } from "../src/index.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const id = (n: number) => `1f0c0000-0000-6000-8000-${String(n).padStart(12, "0")}`;
function cp(n: number): Checkpoint {
  return { v: 4, id: id(n), ts: "2026-01-01T00:00:00.000Z", channel_values: { n }, channel_versions: { n }, versions_seen: {} };
}
type Config = { configurable: { thread_id: string; checkpoint_ns: string; checkpoint_id?: string } };

describe.skipIf(!bin)("a thread's newest checkpoints", () => {
  let srv: LocalServer;
  let dir: string;
  /** Every checkpoint id the thread holds, and the main line's newest two. */
  const all: string[] = [];
  let head = 0;
  let belowHead = 0;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-newest-first-");
    srv = await startServer({ bin, store: dir });
    const writer = new CairnSaver({ client: srv.client });
    const meta = { source: "loop" as const, step: 0, parents: {} };
    let config: Config = { configurable: { thread_id: "t", checkpoint_ns: "" } };
    let n = 0;
    const main: number[] = [];
    for (let i = 1; i <= 200; i++) {
      if (i % 50 === 0) {
        // Time travel: a branch from 20 checkpoints back, with a checkpoint of its own.
        const back = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(main[main.length - 20]) } };
        await writer.put(back, cp(++n), meta, { n });
        all.push(id(n));
      }
      config = (await writer.put(config, cp(++n), meta, { n })) as Config;
      all.push(id(n));
      main.push(n);
      await writer.putWrites(config, [["n", -n]], "task-1");
    }
    head = main[main.length - 1];
    belowHead = main[main.length - 2];
  }, 120_000);
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh saver whose client counts the log requests it makes and the steps they read. */
  function reader(): { saver: CairnSaver; logs: () => number; steps: () => number; paths: string[] } {
    const paths: string[] = [];
    let steps = 0;
    const counting: typeof fetch = async (input, init) => {
      const path = new URL(String(input)).pathname;
      paths.push(path);
      const r = await fetch(input, init);
      if (path.endsWith("/log") && r.ok) steps += ((await r.clone().json()) as { steps: unknown[] }).steps.length;
      return r;
    };
    const saver = new CairnSaver({ client: new CairnClient({ url: srv.url, token: srv.token, fetch: counting }) });
    return { saver, logs: () => paths.filter((p) => p.endsWith("/log")).length, steps: () => steps, paths };
  }

  it("list with limit 1 reads no branch's history", async () => {
    const r = reader();
    const got = [];
    for await (const t of r.saver.list({ configurable: { thread_id: "t" } }, { limit: 1 })) got.push(t);
    expect(got.map((t) => t.checkpoint.id)).toEqual([id(head)]);
    expect(got[0].pendingWrites).toEqual([["task-1", "n", -head]]);
    const seen = `${r.logs()} log requests reading ${r.steps()} steps: ${r.paths.join(" ")}`;
    expect(r.logs(), seen).toBe(0);
  });

  it("getTuple of the checkpoint below the head reads a page of one branch", async () => {
    const r = reader();
    const t = await r.saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(belowHead) } });
    expect(t?.checkpoint.id).toBe(id(belowHead));
    expect(t?.pendingWrites).toEqual([["task-1", "n", -belowHead]]);
    expect(t?.checkpoint.channel_values).toEqual({ n: belowHead });
    const seen = `${r.logs()} log requests reading ${r.steps()} steps: ${r.paths.join(" ")}`;
    expect(r.logs(), seen).toBe(1);
    expect(r.steps(), seen).toBeLessThanOrEqual(16);
  });

  it("list still yields every branch's checkpoints newest first, with before and limit", async () => {
    const r = reader();
    const ids = async (opts: { limit?: number; before?: Config }) => {
      const out: string[] = [];
      for await (const t of r.saver.list({ configurable: { thread_id: "t", checkpoint_ns: "" } }, opts)) out.push(t.checkpoint.id);
      return out;
    };
    const desc = [...all].sort().reverse();
    expect(desc.length).toBe(204);
    expect(await ids({})).toEqual(desc);
    const before = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(153) } };
    expect(await ids({ before, limit: 5 })).toEqual(desc.filter((x) => x < id(153)).slice(0, 5));
  });

  it("list orders a branch whose checkpoints were put out of order, reading it whole", async () => {
    const writer = new CairnSaver({ client: srv.client });
    const meta = { source: "loop" as const, step: 0, parents: {} };
    const root = { configurable: { thread_id: "u", checkpoint_ns: "" } };
    // Two roots, the second older than the first, on the thread's first branch; then a child of the second.
    await writer.put(root, cp(1005), meta, { n: 1005 });
    const c3 = await writer.put(root, cp(1003), meta, { n: 1003 });
    await writer.put(c3, cp(1004), meta, { n: 1004 });
    const r = reader();
    const ids: string[] = [];
    for await (const t of r.saver.list({ configurable: { thread_id: "u" } })) ids.push(t.checkpoint.id);
    expect(ids).toEqual([id(1005), id(1004), id(1003)]);
    const one = [];
    for await (const t of r.saver.list({ configurable: { thread_id: "u" } }, { limit: 1 })) one.push(t.checkpoint.id);
    expect(one).toEqual([id(1005)]);
    expect((await r.saver.getTuple({ configurable: { thread_id: "u", checkpoint_ns: "", checkpoint_id: id(1003) } }))?.checkpoint.id).toBe(id(1003));
  });
});
