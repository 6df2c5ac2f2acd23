// End to end across three Node processes on one cairn serve: the first
// runs a LangGraph graph until it interrupts for approval, the second
// resumes it with Command({resume}), the third goes back to the
// checkpoint before the plan (time travel), runs from there to a new
// question on its own branch, answers it differently and finishes there.
// `cairn log` then shows the tree: the branch forks from the main session
// at that checkpoint.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");
const agent = fileURLToPath(new URL("./e2e/agent.mjs", import.meta.url));

describe.skipIf(!bin)("interrupt, resume and fork across three processes", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-e2e-");
    srv = await startServer({ bin, store: dir });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (phase: string) =>
    JSON.parse(
      execFileSync(process.execPath, [agent, phase, "approval-1"], {
        env: { ...process.env, CAIRN_URL: srv.url, CAIRN_TOKEN: srv.token },
        encoding: "utf8",
      }),
    );
  const cairn = (...args: string[]) => execFileSync(bin!, ["--store", dir, ...args], { encoding: "utf8" });

  it("pauses in one process, resumes in a second, forks in a third", () => {
    const first = run("start");
    expect(first.interrupt).toEqual({ question: "May I delete the old logs?" });
    expect(first.next).toEqual(["approve"]);

    const second = run("resume");
    expect(second).toEqual({ decision: "approve", last: "deleted the old logs" });

    const third = run("fork");
    expect(third.interrupt).toEqual({ question: "May I delete the old logs?" });
    expect(third.decision).toBe("reject");
    expect(third.last).toBe("kept the old logs");
    // The newest checkpoint of the thread is now the branch's.
    expect(third.latestDecision).toBe("reject");

    // The tree: one main session and one branch forked from it.
    const sessions = cairn("sessions").split("\n").map((l) => l.trim().split(/\s+/)[0]).filter((s) => s.startsWith("lg."));
    const main = sessions.filter((s) => s.endsWith(".0"));
    const branches = sessions.filter((s) => !s.endsWith(".0"));
    expect(main).toHaveLength(1);
    expect(branches).toHaveLength(1);
    const log = (s: string) => cairn("log", s, "--json").trim().split("\n").map((l) => JSON.parse(l));
    const branchLog = log(branches[0]);
    const forkLine = branchLog.find((l) => l.origin);
    expect(forkLine.origin.startsWith(main[0] + "@")).toBe(true);
    const forkedAt = Number(forkLine.origin.split("@")[1]);
    // The fork point is the checkpoint travelled back to; the branch goes on from it.
    expect(forkLine.record.checkpoint_id).toBe(third.from);
    expect(branchLog[0].session).toBe(branches[0]);
    expect(branchLog.filter((l) => l.session === main[0]).every((l) => l.step < forkedAt)).toBe(true);
    // The main session went on past the fork point with the approval.
    const mainLog = log(main[0]);
    expect(mainLog[0].step).toBeGreaterThan(forkedAt);
    expect(mainLog.some((l) => l.record?.checkpoint_id === third.from)).toBe(true);
    // And the text log names the fork.
    expect(cairn("log", branches[0])).toContain(`(fork of ${main[0]}@${forkedAt})`);
  });
});
