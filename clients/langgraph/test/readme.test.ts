// The README's "From LangGraph.js" block, run as written from the
// repository root: a graph checkpoints into cairn through a private
// cairn serve, and lists its checkpoints newest first.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { cairnBin, required } from "../../typescript/test/harness.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

function block(title: string): string {
  const section = readFileSync(root + "README.md", "utf8").split(`## ${title}\n`)[1].split("\n## ")[0];
  const m = /```sh\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error(`no sh block under ${title}`);
  return m[1];
}

it.skipIf(!bin)("runs the README's From LangGraph.js block", () => {
  const env = { ...process.env };
  delete env.CAIRN_URL;
  delete env.CAIRN_TOKEN;
  const out = execFileSync("bash", ["-euo", "pipefail", "-c", block("From LangGraph.js")], { cwd: root, env, encoding: "utf8" });
  const lines = out.trim().split("\n");
  const at = lines.findIndex((l) => l.startsWith("hello | "));
  expect(lines[at]).toBe("hello | you said: hello | again | you said: again");
  const ids = lines.slice(at + 1).map((l) => l.split(" ")[0]);
  expect(ids).toHaveLength(6);
  expect([...ids].sort().reverse()).toEqual(ids);
});
