// Two savers put the first checkpoint of a new thread at once: the one
// that loses the race goes on after the other's step, and its step's
// record must then claim no order (below), nor may the saver's memory of
// it, or the next checkpoint it puts there claims an order its session
// does not have: list then yielded the thread out of order, and getTuple
// missed the other saver's root.
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
const meta = { source: "loop" as const, step: 0, parents: {} };

describe.skipIf(!bin)("two savers putting a thread's first checkpoint at once", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-concurrent-roots-");
    srv = await startServer({ bin, store: dir });
  }, 60_000);
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("list and getTuple still see the thread newest first", async () => {
    const other = new CairnSaver({ client: new CairnClient({ url: srv.url, token: srv.token }) });
    let raced = false;
    // The other saver's root lands between this saver's look at the
    // thread's first branch and its commit there.
    class Racing extends CairnClient {
      override async commit(...args: Parameters<CairnClient["commit"]>) {
        if (!raced) {
          raced = true;
          await other.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, cp(2), meta, { n: 2 });
        }
        return super.commit(...args);
      }
    }
    const saver = new CairnSaver({ client: new Racing({ url: srv.url, token: srv.token }) });
    const root = await saver.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, cp(1), meta, { n: 1 });
    expect(raced).toBe(true);
    await saver.put(root, cp(3), meta, { n: 3 });

    const reader = new CairnSaver({ client: new CairnClient({ url: srv.url, token: srv.token }) });
    const ids: string[] = [];
    for await (const t of reader.list({ configurable: { thread_id: "t" } })) ids.push(t.checkpoint.id);
    expect(ids).toEqual([id(3), id(2), id(1)]);
    const t2 = await reader.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(2) } });
    expect(t2?.checkpoint.id).toBe(id(2));
  });
});
