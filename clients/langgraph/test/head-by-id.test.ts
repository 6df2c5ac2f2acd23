// Reading a thread's newest checkpoint by its id (the config that invoke
// and getState return names it, and LangGraph resumes from such configs)
// costs the thread's heads, not its history: a fresh saver, as in another
// process, finds it without reading any session's log, however long the
// thread. An older checkpoint is still found, from the history.
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

describe.skipIf(!bin)("a checkpoint read by id", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-head-by-id-");
    srv = await startServer({ bin, store: dir });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is found among the heads when it is the newest", async () => {
    const writer = new CairnSaver({ client: srv.client });
    let config = { configurable: { thread_id: "t", checkpoint_ns: "" } };
    const meta = { source: "loop" as const, step: 0, parents: {} };
    for (let n = 1; n <= 5; n++) config = (await writer.put(config, cp(n), meta, { n })) as typeof config;
    await writer.putWrites(config, [["n", 6]], "task-1");

    const paths: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      paths.push(new URL(String(input)).pathname);
      return fetch(input, init);
    };
    const reader = new CairnSaver({ client: new CairnClient({ url: srv.url, token: srv.token, fetch: counting }) });
    const newest = await reader.getTuple(config);
    expect(newest?.checkpoint.id).toBe(id(5));
    expect(newest?.pendingWrites).toEqual([["task-1", "n", 6]]);
    expect(paths.filter((p) => p.endsWith("/log")), `requests: ${paths.join(" ")}`).toEqual([]);

    const older = await reader.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(2) } });
    expect(older?.checkpoint.id).toBe(id(2));
    expect(older?.checkpoint.channel_values).toEqual({ n: 2 });
    expect(await reader.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id(9) } })).toBeUndefined();
  });
});
