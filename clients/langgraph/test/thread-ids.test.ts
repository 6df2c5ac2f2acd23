// A thread_id that is no string. LangGraph's configs are untyped objects,
// and a careless caller passes { thread_id: 42 }: put said the config had
// no thread_id at all, getTuple found nothing (so a graph started the thread
// afresh, then failed at put), and list reached Buffer's own TypeError
// ("The first argument must be of type string ..."). Each now says what it
// got, and stores nothing.
import { rmSync } from "node:fs";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { CairnSaver } from "../src/index.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const cp: Checkpoint = {
  v: 4,
  id: "1f0c0000-0000-6000-8000-000000000001",
  ts: "2026-01-01T00:00:00.000Z",
  channel_values: { text: "a" },
  channel_versions: { text: 1 },
  versions_seen: {},
};

describe.skipIf(!bin)("a thread_id that is no string", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-thread-ids-");
    srv = await startServer({ bin, store: dir });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [what, id] of [["a number", 42], ["a list", ["t"]], ["a boolean", true]] as [string, unknown][]) {
    it(`is refused, naming it, when it is ${what}`, async () => {
      const saver = new CairnSaver({ client: srv.client });
      const config = { configurable: { thread_id: id as string } };
      const shown = typeof id === "object" ? "a list" : String(id);
      await expect(saver.put(config, cp, { source: "input", step: -1, parents: {} }, {})).rejects.toThrow(
        new TypeError(`put checkpoint: want a thread_id that is a string, not ${shown}`),
      );
      await expect(saver.putWrites({ configurable: { thread_id: id as string, checkpoint_id: cp.id } }, [["text", "b"]], "task")).rejects.toThrow(
        new TypeError(`put writes: want a thread_id that is a string, not ${shown}`),
      );
      await expect(saver.getTuple(config)).rejects.toThrow(new TypeError(`get checkpoint: want a thread_id that is a string, not ${shown}`));
      await expect(saver.list(config).next()).rejects.toThrow(new TypeError(`list checkpoints: want a thread_id that is a string, not ${shown}`));
      await expect(saver.deleteThread(id as string)).rejects.toThrow(new TypeError(`delete thread: want a thread_id (a non-empty string), not ${shown}`));
      expect(await srv.client.sessions()).toEqual([]);
    }, 60_000);
  }
});
