// LangGraph's checkpointer validation suite, on MinIO started by the test
// (random credentials, loopback port). Under CI=true a MinIO that cannot
// start fails the run.
import { it } from "vitest";
import { cairnBin, minioBin, required, startMinIO } from "../../typescript/test/harness.js";
import { validateOn } from "./validate.js";

const bin = cairnBin();
const minio = minioBin();
if (!bin || !minio) {
  if (required()) throw new Error("cairn or minio binary not found: set CAIRN_BIN and CAIRN_MINIO, or run `make build minio`");
  it.skip("cairn or minio binary not found (set CAIRN_BIN and CAIRN_MINIO)", () => {});
} else {
  validateOn("MinIO", bin, async () => {
    const m = await startMinIO(minio);
    return { url: m.storeURL(), env: m.env, stop: m.stop };
  });
}
