// The server startServer() started dies (killed) while a call is under
// way, or before one: each call says that server exited, not "is the port
// in the URL right?" of a port the caller never chose, and nothing is left
// half done.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InvalidError, UnavailableError } from "../src/index.js";
import { startServer } from "../src/local.js";
import { cairnBin, required, tempDir } from "./harness.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

describe.skipIf(!bin)("a private server that dies", () => {
  it("is said to have exited, by every call after, and nothing is half done", async () => {
    const dir = tempDir();
    try {
      const srv = await startServer({ bin, store: dir });
      const c = srv.client;
      await c.commit("s", { n: 1 });
      // Its process: the one serving this store (pgrep -f matches its arguments).
      const pid = Number(execFileSync("pgrep", ["-f", "--", `--store ${dir} serve`]).toString().trim());
      expect(pid).toBeGreaterThan(0);
      const waiting = c.wait("s", 1, { timeout: 120 }).catch((e) => e); // nothing comes: the server dies first
      // Killed whenever: before the wait reached it (refused) or during
      // (reset), the words are the same.
      process.kill(pid, "SIGKILL");
      const said = `cairn: 0 unreachable: could not reach the cairn server at ${srv.url}: the cairn serve that startServer() started has exited (killed by SIGKILL): start another to go on`;
      const e = await waiting;
      expect(e).toBeInstanceOf(UnavailableError);
      expect(e.message).toBe(said);
      const w = await c.commit("s", { n: 2 }).catch((x) => x);
      expect(w).toBeInstanceOf(UnavailableError);
      expect(w.message).toBe(`${said}; nothing was sent`);
      await srv.close();
      const closed = await c.head("s").catch((x) => x);
      expect(closed).toBeInstanceOf(InvalidError);
      expect(closed.code).toBe("closed");
      // Nothing half done: the store holds the one step.
      const again = await startServer({ bin, store: dir });
      try {
        expect((await again.client.log("s")).map((st) => st.step)).toEqual([1]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
