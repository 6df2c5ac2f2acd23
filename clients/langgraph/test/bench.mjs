// Side by side, in one run: the same LangGraph graph and workload (a
// message list growing by one ~4.5 KB message a step, 300 steps) with
// LangGraph's SQLite checkpointer and with CairnSaver on cairn's local
// store. Prints stored bytes ÷ appended bytes and ms a step for each, and
// issue 16's two targets against SQLite. Each checkpointer runs `rounds`
// times, the three taking turns so that a change in the machine's load
// falls on all of them; ms a step is the median of its rounds.
//
//   CAIRN_BIN=... node test/bench.mjs [steps] [rounds]
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { startServer } from "@cairnlog/client/local";
import { CairnSaver } from "../dist/index.js";

const steps = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 3);
const words = "agent tool call result plan observe retry search fetch parse answer token model context state memory step".split(" ");
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
function message(i) {
  let s = `step ${i}:`;
  while (s.length < 4500) s += " " + words[Math.floor(rand() * words.length)] + Math.floor(rand() * 1000);
  return s;
}
const texts = Array.from({ length: steps }, (_, i) => message(i));
const appended = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);

function graph(checkpointer) {
  return new StateGraph(MessagesAnnotation)
    .addNode("model", (s) => ({ messages: [new AIMessage(texts[s.messages.length - 1])] }))
    .addEdge(START, "model")
    .addConditionalEdges("model", (s) => (s.messages.length > steps ? END : "model"))
    .compile({ checkpointer });
}

function du(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((n, e) => n + du(join(p, e)), 0);
}

async function run(name, checkpointer, storedBytes) {
  const g = graph(checkpointer);
  const t0 = performance.now();
  const out = await g.invoke({ messages: [new HumanMessage("go")] }, { configurable: { thread_id: "bench" }, recursionLimit: steps + 10 });
  const ms = performance.now() - t0;
  if (out.messages.length !== steps + 1) throw new Error(`${name}: ${out.messages.length} messages`);
  const stored = storedBytes();
  return { name, stored, ratio: stored / appended, msPerStep: ms / steps };
}

// The machine's load, before and after: both runs share it, but it moves ms a step.
const loadavg = () => (existsSync("/proc/loadavg") ? readFileSync("/proc/loadavg", "utf8").trim() : "n/a");
const loadBefore = loadavg();
const dir = mkdtempSync(join(tmpdir(), "cairn-bench-"));
// LangGraph's SQLite checkpointer opens its database in WAL mode, and
// better-sqlite3 builds SQLite with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1
// (NORMAL): a step survives the process crashing but not the machine,
// since nothing is fsync'd until a WAL checkpoint. cairn makes every
// step durable (fsync of the object and its directory) before it
// acknowledges it. So SQLite runs twice: as users get it, and with
// synchronous=FULL, which fsyncs the WAL at every commit: like for like.
const sqliteDefault = "@langchain/langgraph-checkpoint-sqlite (default: WAL, synchronous=NORMAL, no fsync a step)";
const sqliteFull = "@langchain/langgraph-checkpoint-sqlite (synchronous=FULL: each step durable)";
const cairn = "@cairnlog/langgraph-checkpoint (local store: each step durable)";
const contenders = [
  [sqliteDefault, async (d) => [SqliteSaver.fromConnString(join(d, "lg.sqlite")), async () => {}]],
  [sqliteFull, async (d) => {
    const s = SqliteSaver.fromConnString(join(d, "lg.sqlite"));
    s.db.pragma("synchronous=FULL");
    return [s, async () => {}];
  }],
  [cairn, async (d) => {
    const srv = await startServer({ store: d });
    return [new CairnSaver({ client: srv.client }), () => srv.close()];
  }],
];
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
try {
  const runs = new Map(contenders.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [i, [name, open]] of contenders.entries()) {
      const d = join(dir, `${i}-${round}`);
      mkdirSync(d);
      const [saver, close] = await open(d);
      try {
        runs.get(name).push(await run(name, saver, () => du(d)));
      } finally {
        await close();
      }
      rmSync(d, { recursive: true, force: true });
    }
  }
  const results = contenders.map(([name]) => {
    const rs = runs.get(name);
    return { name, stored: rs[0].stored, ratio: rs[0].ratio, msPerStep: median(rs.map((r) => r.msPerStep)), rounds: rs.map((r) => r.msPerStep) };
  });
  const [a, f, b] = results;
  const verdict = (ok) => (ok ? "**met**" : "**missed**");
  console.log(`${steps} steps, ${appended} bytes appended (${(appended / steps / 1000).toFixed(2)} KB a step), ${rounds} rounds taking turns, ms a step the median; /proc/loadavg before: ${loadBefore}, after: ${loadavg()}\n`);
  console.log("| checkpointer | stored bytes | stored ÷ appended | ms a step (median) | each round |");
  console.log("| --- | ---: | ---: | ---: | --- |");
  for (const r of results) console.log(`| ${r.name} | ${r.stored} | ${r.ratio.toFixed(2)} | ${r.msPerStep.toFixed(1)} | ${r.rounds.map((m) => m.toFixed(1)).join(", ")} |`);
  console.log("\n| target (issue 16) | cairn | SQLite | ratio | target | |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  console.log(`| stored ÷ appended | ${b.ratio.toFixed(2)} | ${a.ratio.toFixed(2)} | | ≤ 2 | ${verdict(b.ratio <= 2)} |`);
  console.log(`| ms a step, against SQLite as users get it | ${b.msPerStep.toFixed(1)} | ${a.msPerStep.toFixed(1)} | ${(b.msPerStep / a.msPerStep).toFixed(2)}× | ≤ 1× | ${verdict(b.msPerStep <= a.msPerStep)} |`);
  console.log(`| ms a step, against SQLite with each step durable | ${b.msPerStep.toFixed(1)} | ${f.msPerStep.toFixed(1)} | ${(b.msPerStep / f.msPerStep).toFixed(2)}× | ≤ 1× | ${verdict(b.msPerStep <= f.msPerStep)} |`);
  console.log("\n" + JSON.stringify({ steps, rounds, appended, loadBefore, loadAfter: loadavg(), results }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
