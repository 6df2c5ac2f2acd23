// This package's README block, run as written, as a new user would: in a
// clean checkout of the package (no dist/), packed with npm pack, installed
// from the tarball into a fresh project, run in plain Node ESM; then a
// TypeScript file of that project type-checks under --strict against the
// types the tarball installed.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { cairnBin, required, tempDir } from "./harness.js";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

function block(): string {
  const m = /<!-- run whole by clients\/typescript\/test\/readme\.test\.ts -->\n```sh\n([\s\S]*?)```/.exec(readFileSync(join(pkg, "README.md"), "utf8"));
  if (!m) throw new Error("no sh block marked to run in README.md");
  return m[1];
}

const scratch = tempDir();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it.skipIf(!bin)("runs the README's block in a clean checkout, and the packed types check under --strict", () => {
  // The repository as the block sees it: the package's own files (not
  // its dist/, which a clean checkout lacks; its node_modules, which
  // `make clients-deps` installs) and the cairn binary `make build` makes.
  const root = join(scratch, "repo");
  const copy = join(root, "clients/typescript");
  cpSync(pkg, copy, { recursive: true, filter: (src) => !/[/\\](node_modules|dist)$/.test(src) });
  symlinkSync(join(pkg, "node_modules"), join(copy, "node_modules"));
  mkdirSync(join(root, ".cache/bin"), { recursive: true });
  symlinkSync(bin!, join(root, ".cache/bin/cairn"));
  const tmp = join(scratch, "tmp");
  mkdirSync(tmp);
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
  delete env.CAIRN_URL;
  delete env.CAIRN_TOKEN;
  delete env.CAIRN_BIN;
  const out = execFileSync("bash", ["-euo", "pipefail", "-c", block()], { cwd: root, env, encoding: "utf8" });
  expect(out.trim().split("\n").slice(-2)).toEqual(['{"reply":{"approved":true},"in_reply_to":2} 3 2 1', "true 3"]);

  // The project the block made, with the package installed from its tarball.
  const [d] = readdirSync(tmp);
  writeFileSync(
    join(tmp, d, "main.ts"),
    `import { CairnClient, ConflictError, InvalidError, isReply, type Change, type Pending, type SessionInfo, type Step } from "@cairnlog/client";
import { startServer, type LocalServer } from "@cairnlog/client/local";
const server: LocalServer = await startServer();
const c: CairnClient = server.client;
const st: Step = await c.commit("s", { a: 1 }, { expect: 0, record: { turn: 1 }, idempotencyKey: "job/1", signal: AbortSignal.timeout(1000) });
const n: number = st.step;
const parent: string | null = st.parent;
const replayed: boolean | undefined = st.replayed;
const status: "running" | "awaiting_input" | "done" = st.status;
const head: Step | undefined = await c.head("s", { state: false });
const sessions: SessionInfo[] = await c.sessions("s");
const pending: Pending[] = await c.inbox();
const waited = await c.wait("s", n, { timeout: 1 });
if (waited && isReply(waited.record)) {
  const to: number = waited.record.in_reply_to;
}
try {
  await c.commit("s", {}, { expect: 0 });
} catch (e) {
  if (e instanceof ConflictError) {
    const at: number | undefined = e.head;
  } else if (e instanceof InvalidError) {
    const code: string = e.code;
  }
}
for await (const s of c.logAll("s", { page: 100 })) {
  const t: string = s.time;
}
const changes: Change[] = await c.diff("s", "s@1");
const removed: number = (await c.remove("s")).steps;
await server.close();
`,
  );
  const tsc = join(pkg, "node_modules/.bin/tsc");
  const args = ["--strict", "--noEmit", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "--typeRoots", join(pkg, "node_modules/@types"), "main.ts"];
  execFileSync(tsc, args, { cwd: join(tmp, d), encoding: "utf8" });
}, 180_000);
