// LangGraph's checkpointer validation suite, on the local (directory) store.
import { rmSync } from "node:fs";
import { it } from "vitest";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { validateOn } from "./validate.js";

const bin = cairnBin();
if (!bin) {
  if (required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");
  it.skip("cairn binary not found (set CAIRN_BIN or run `make build`)", () => {});
} else {
  validateOn("the local store", bin, async () => {
    const dir = tempDir("cairn-lg-");
    return { url: dir, stop: async () => rmSync(dir, { recursive: true, force: true }) };
  });
}
