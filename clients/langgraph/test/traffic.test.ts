// What the saver sends a step (issue 16's speed target). LangGraph hands a
// checkpointer every channel's whole value at every step; on a message list
// growing by one ~4.5 KB message a step, the saver must send what changed
// (about the message, twice: as the task's pending write and as the
// checkpoint's new element), not the list, and in a bounded number of
// requests. Counted on the wire, through the client's fetch.
import { rmSync } from "node:fs";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CairnClient } from "@cairnlog/client";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { CairnSaver } from "../src/index.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

const msgBytes = 4500;
function text(i: number): string {
  let s = `step ${i}:`;
  for (let w = 0; s.length < msgBytes; w++) s += ` word${(i * 7919 + w * 104729) % 100000}`;
  return s;
}

/** A request as the wire saw it. */
interface Sent {
  method: string;
  path: string;
  bytes: number;
}

describe.skipIf(!bin)("what the saver sends a step", () => {
  let srv: LocalServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("cairn-lg-traffic-");
    srv = await startServer({ bin, store: dir });
  });
  afterAll(async () => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the change, not the state, in about 2 requests a step", async () => {
    const steps = 40;
    const sent: Sent[] = [];
    const counting: typeof fetch = async (input, init) => {
      const u = new URL(String(input));
      sent.push({ method: init?.method ?? "GET", path: u.pathname, bytes: Buffer.byteLength(String(init?.body ?? "")) });
      return fetch(input, init);
    };
    const client = new CairnClient({ url: srv.url, token: srv.token, fetch: counting });
    const g = new StateGraph(MessagesAnnotation)
      .addNode("model", (s) => ({ messages: [new AIMessage(text(s.messages.length))] }))
      .addEdge(START, "model")
      .addConditionalEdges("model", (s) => (s.messages.length > steps ? END : "model"))
      .compile({ checkpointer: new CairnSaver({ client, prefix: "traffic" }) });
    const out = await g.invoke({ messages: [new HumanMessage("go")] }, { configurable: { thread_id: "t" }, recursionLimit: steps + 10 });
    expect(out.messages).toHaveLength(steps + 1);

    // LangGraph puts a checkpoint and the task's writes a step, and runs
    // ahead of its puts: count the whole run. Sending the list each time
    // would be ~4.5 KB times the list's length a step (180 KB at the end).
    const perStep = sent.reduce((n, s) => n + s.bytes, 0) / steps;
    expect(perStep, `bytes sent a step: ${perStep}`).toBeLessThan(3 * msgBytes);
    expect(sent.length, `requests: ${sent.length} for ${steps} steps`).toBeLessThanOrEqual(2 * steps + 10);

    // And what it stored reads back as the graph's state.
    const again = await g.getState({ configurable: { thread_id: "t" } });
    expect(again.values.messages.map((m: AIMessage) => m.content)).toEqual(out.messages.map((m) => m.content));
  });
});
