// Writes of a checkpoint whose put failed, or that was never put, are
// refused once nothing of the saver is under way, saying why, instead of
// waiting for a put that is not coming. LangGraph hands a task's writes over
// before the checkpoint's put is stored; when that put fails (here: the
// server refuses a request over its body limit, 32 MiB by default), the writes must fail with
// it, and the run's process must not be held up by them.
import { rmSync } from "node:fs";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { CairnSaver } from "../src/index.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const id = (n: number) => `1f0c0000-0000-6000-8000-${String(n).padStart(12, "0")}`;
function cp(n: number, text: unknown): Checkpoint {
  return { v: 4, id: id(n), ts: "2026-01-01T00:00:00.000Z", channel_values: { text }, channel_versions: { text: n }, versions_seen: {} };
}

describe.skipIf(!bin)("writes of a checkpoint that is not stored", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-failed-put-");
    srv = await startServer({ bin, store: dir });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fail with the put's error when the put fails", async () => {
    const saver = new CairnSaver({ client: srv.client });
    const root = { configurable: { thread_id: "t", checkpoint_ns: "" } };
    const at = (n: number) => ({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(n) } });
    const meta = { source: "loop" as const, step: 0, parents: {} };
    await saver.put(root, cp(1, "small"), meta, { text: 1 });
    // As LangGraph does: the writes first, then the put, which the server refuses.
    const writes = saver.putWrites(at(2), [["text", "more"]], "task-1");
    const put = saver.put(at(1), cp(2, "x".repeat(33 << 20)), meta, { text: 2 });
    const [w, p] = await Promise.allSettled([writes, put]);
    expect(p.status).toBe("rejected");
    expect(w.status).toBe("rejected");
    const err = (w as PromiseRejectedResult).reason as Error;
    expect(err.message).toMatch(/^put writes: checkpoint 1f0c0000-0000-6000-8000-000000000002 of thread "t" was not stored: .*limit/);
    expect(err.cause).toBe((p as PromiseRejectedResult).reason);
    // Nothing was stored for checkpoint 2; checkpoint 1 is still the newest.
    expect((await saver.getTuple(root))?.checkpoint.id).toBe(id(1));
  }, 60_000);

  it("fail as not found when the checkpoint was never put", async () => {
    const saver = new CairnSaver({ client: srv.client });
    const writes = saver.putWrites({ configurable: { thread_id: "u", checkpoint_ns: "", checkpoint_id: id(7) } }, [["text", "x"]], "task-1");
    await expect(writes).rejects.toThrow(`put writes: checkpoint ${id(7)} of thread "u" not found`);
  }, 60_000);
});
