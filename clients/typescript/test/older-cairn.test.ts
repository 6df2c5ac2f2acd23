// startServer with a cairn binary older than --stop-on-stdin-eof.
import { spawn } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { startServer } from "../src/local.js";
import { cairnBin, required, tempDir } from "./harness.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");
const built = pathToFileURL(resolve(dirname(fileURLToPath(import.meta.url)), "../dist/local.js")).href;

/**
 * older writes a cairn that refuses --stop-on-stdin-eof in the words of
 * cairn before it (exit 2; `cairn serve --frob` says the same of --frob)
 * and is the real one otherwise, writing its pid to pidFile.
 */
function older(dir: string, pidFile: string): string {
  const b = join(dir, "older-cairn");
  writeFileSync(
    b,
    `#!/bin/sh
for a in "$@"; do
  if [ "$a" = --stop-on-stdin-eof ]; then
    echo "cairn serve: unknown flag --stop-on-stdin-eof (see cairn help serve)" >&2
    exit 2
  fi
done
echo $$ > '${pidFile}'
exec '${bin}' "$@"
`,
  );
  chmodSync(b, 0o755);
  return b;
}

/** refuses reports, within 30 s, whether url has stopped answering (its port refuses connections). */
async function refuses(url: string): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    const answer = await fetch(url + "/v1/sessions").then((r) => String(r.status), (e) => String(e.cause?.code ?? e));
    if (answer === "ECONNREFUSED") return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

function kill(pidFile: string): void {
  try {
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
  } catch {
    // gone, as it should be
  }
}

describe.skipIf(!bin)("startServer with a cairn older than --stop-on-stdin-eof", () => {
  it("starts it without the flag, and close() stops it", async () => {
    // It rejected: "start cairn serve: exited with 2: cairn serve: unknown
    // flag --stop-on-stdin-eof (see cairn help serve)", with a cairn that
    // serves this client well but for that flag.
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    try {
      const srv = await startServer({ bin: older(dir, pidFile), store: join(dir, "store") });
      try {
        expect((await srv.client.commit("s", { a: 1 })).step).toBe(1);
      } finally {
        await srv.close();
      }
      expect(await refuses(srv.url), "the server still answers after close()").toBe(true);
    } finally {
      kill(pidFile);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("stops it when the program returns without close()", async () => {
    // Without the flag the server cannot see the program killed by a
    // signal, but it stops at the program's exit, as before the flag.
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    try {
      const program = join(dir, "agent.mjs");
      writeFileSync(
        program,
        `import { startServer } from ${JSON.stringify(built)};
const srv = await startServer({ bin: ${JSON.stringify(older(dir, pidFile))}, store: ${JSON.stringify(join(dir, "store"))} });
await srv.client.commit("s", { a: 1 });
console.log(srv.url);
`,
      );
      const child = spawn(process.execPath, [program], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.once("exit", (c, s) => r([c, s])));
      clearTimeout(killer);
      expect([code, signal], "the program did not end by itself").toEqual([0, null]);
      const url = out.trim();
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await refuses(url), "the server still answers after the program ended").toBe(true);
    } finally {
      kill(pidFile);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("does not start again a cairn that fails otherwise", async () => {
    const dir = tempDir();
    try {
      const b = join(dir, "broken-cairn");
      const starts = join(dir, "starts");
      writeFileSync(b, `#!/bin/sh\necho x >> '${starts}'\necho 'cairn: open store: permission denied' >&2\nexit 2\n`);
      chmodSync(b, 0o755);
      const e = await startServer({ bin: b, store: join(dir, "store") }).catch((x) => x);
      expect(e.message).toBe("start cairn serve: exited with 2: cairn: open store: permission denied");
      expect(readFileSync(starts, "utf8")).toBe("x\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
