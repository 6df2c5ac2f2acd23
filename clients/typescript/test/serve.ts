// One `cairn serve` on a fresh store for a describe block of this
// package's tests (not imported by the LangGraph package's tests, which
// run their own vitest).
import { rmSync } from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { startServer, type LocalServer } from "../src/local.js";
import { tempDir } from "./harness.js";

/**
 * serveForSuite starts `cairn serve` (the binary bin) on a fresh store
 * before the calling describe block's tests, hands the server and its
 * store's directory to got, and stops the server and removes the store
 * after them.
 */
export function serveForSuite(bin: string, got: (srv: LocalServer, dir: string) => void): void {
  let srv: LocalServer | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = tempDir();
    srv = await startServer({ bin, store: dir });
    got(srv, dir);
  });
  afterAll(async () => {
    await srv?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
}
