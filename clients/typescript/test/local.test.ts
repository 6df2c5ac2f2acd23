// startServer with a cairn binary it cannot start.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../src/local.js";
import { tempDir } from "./harness.js";

describe("startServer", () => {
  it("rejects, in words, when the cairn binary is not there or cannot run", async () => {
    // It used to wait for ever: a binary that cannot be started emits
    // "error" and never "exit", and startServer awaited the exit.
    const dir = tempDir();
    try {
      const missing = join(dir, "no-such-cairn");
      const e = await startServer({ bin: missing, store: join(dir, "store") }).catch((x) => x);
      expect(e).toBeInstanceOf(Error);
      expect(e.message).toBe(`start cairn serve: cairn binary ${JSON.stringify(missing)} not found: pass bin, set CAIRN_BIN or put cairn on PATH`);
      const plain = join(dir, "not-executable");
      writeFileSync(plain, "");
      const e2 = await startServer({ bin: plain, store: join(dir, "store") }).catch((x) => x);
      expect(e2.message).toMatch(/not executable: pass bin, set CAIRN_BIN or put cairn on PATH$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 10_000);
});
