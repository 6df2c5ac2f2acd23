// startServer with a cairn binary it cannot start, and in a program that
// ends without closing it.
import { spawn } from "node:child_process";
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { startServer } from "../src/local.js";
import { cairnBin, required, tempDir } from "./harness.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");
// The program runs the package as built (npm test builds it first).
const built = pathToFileURL(resolve(dirname(fileURLToPath(import.meta.url)), "../dist/local.js")).href;

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

  it("rejects on startTimeout and keeps no program running, though the server's pipes outlive it", async () => {
    // A cairn (here a wrapper script) that never printed its address, and
    // whose own child held its output open: startServer rejected after
    // startTimeout, but the child's pipes kept Node's event loop alive, so
    // the program that caught the rejection never exited.
    const dir = tempDir();
    const childPid = join(dir, "child-pid");
    const wrapper = join(dir, "cairn");
    writeFileSync(wrapper, `#!/bin/sh\necho 'starting up' >&2\nsleep 600 &\necho $! > '${childPid}'\nwait\n`);
    chmodSync(wrapper, 0o755);
    const program = join(dir, "agent.mjs");
    writeFileSync(
      program,
      `import { startServer } from ${JSON.stringify(built)};
await startServer({ bin: ${JSON.stringify(wrapper)}, store: ${JSON.stringify(join(dir, "store"))}, startTimeout: 1 }).catch((e) => console.log(e.message));
`,
    );
    try {
      const child = spawn(process.execPath, [program], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      // A bound on a program that never ends: it is killed, and fails.
      const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.once("exit", (c, s) => r([c, s])));
      clearTimeout(killer);
      expect(signal, "the program did not end by itself").toBeNull();
      expect(code).toBe(0);
      expect(out.trim()).toBe("start cairn serve: no address after 1000 ms: starting up");
    } finally {
      try {
        process.kill(Number(readFileSync(childPid, "utf8")), "SIGKILL");
      } catch {
        // gone
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe.skipIf(!bin)("a program with a private server", () => {
  // The server kept Node's event loop alive, so a program that ended
  // without close() never exited, and one that died (an uncaught
  // exception, process.exit) left the server running for ever, on a
  // token no one knows.
  // And one killed by a signal, which runs no exit handler, left it too.
  for (const end of ["returns", "throws", "calls process.exit", "is killed (SIGKILL)", "is killed (SIGTERM)"]) {
    const killed = end.startsWith("is killed") ? (end.includes("SIGKILL") ? "SIGKILL" : "SIGTERM") : undefined;
    it(`${killed ? "dies" : "exits"} when it ${end} without close(), and stops its server`, async () => {
      const dir = tempDir();
      // The server's pid, to clean up after a program that left it running.
      const pidFile = join(dir, "pid");
      const wrapper = join(dir, "cairn");
      writeFileSync(wrapper, `#!/bin/sh\necho $$ > '${pidFile}'\nexec '${bin}' "$@"\n`);
      chmodSync(wrapper, 0o755);
      const program = join(dir, "agent.mjs");
      writeFileSync(
        program,
        `import { startServer } from ${JSON.stringify(built)};
const srv = await startServer({ bin: ${JSON.stringify(wrapper)}, store: ${JSON.stringify(join(dir, "store"))} });
await srv.client.commit("s", { a: 1 });
console.log(srv.url);
${end === "throws" ? 'throw new Error("the agent crashed");' : end === "calls process.exit" ? "process.exit(3);" : killed ? "setInterval(() => {}, 1000);" : ""}
`,
      );
      let url = "";
      try {
        const child = spawn(process.execPath, [program], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
          if (killed && out.endsWith("\n")) child.kill(killed);
        });
        // A bound on a program that never ends: it is killed, and fails.
        const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
        const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.once("exit", (c, s) => r([c, s])));
        clearTimeout(killer);
        url = out.trim();
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        if (killed) {
          expect(signal).toBe(killed);
        } else {
          expect(signal, "the program did not end by itself").toBeNull();
          expect(code).toBe(end === "returns" ? 0 : end === "throws" ? 1 : 3);
        }
        // The server was asked to stop as the program exited: its port
        // refuses connections once it has.
        let answer = "";
        for (let i = 0; i < 300; i++) {
          answer = await fetch(url + "/v1/sessions").then((r) => String(r.status), (e) => String(e.cause?.code ?? e));
          if (answer === "ECONNREFUSED") break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(answer, "the server still answers").toBe("ECONNREFUSED");
      } finally {
        try {
          process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
        } catch {
          // gone, as it should be
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  }
});
