// A LangGraph thread exports as its conversation: a tool-calling graph
// (an agent node and a tool node) runs two turns on one thread and a
// third from the checkpoint after the first answer (time travel, a fork),
// checkpointing into cairn; `cairn export --format openai-jsonl` then
// gives, for the thread and its fork, exactly the messages LangGraph
// holds at their ends.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { expect, it } from "vitest";
import { startServer } from "@cairnlog/client/local";
import { cairnBin, required, tempDir } from "../../typescript/test/harness.js";
import { CairnSaver } from "../src/index.js";

const bin = cairnBin();
if (!bin && required()) throw new Error("cairn binary not found: set CAIRN_BIN or run `make build`");

/** The OpenAI chat form of a LangChain message, as export writes it. */
function openAI(m: BaseMessage): Record<string, unknown> {
  if (m instanceof AIMessage) {
    const out: Record<string, unknown> = { role: "assistant", content: m.tool_calls?.length && m.content === "" ? null : m.content };
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    }
    return out;
  }
  if (m instanceof ToolMessage) return { role: "tool", content: m.content, tool_call_id: m.tool_call_id, name: m.name };
  if (m instanceof SystemMessage) return { role: "system", content: m.content };
  return { role: "user", content: m.content };
}

it.skipIf(!bin)("exports a LangGraph thread and its time-travel fork as their conversations", async () => {
  const store = tempDir("lg-export") + "/store";
  const server = await startServer({ store, bin });
  const ends: BaseMessage[][] = [];
  try {
    let calls = 0;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", () => {
        calls++;
        if (calls % 2 === 1) {
          return { messages: [new AIMessage({ content: "", tool_calls: [{ id: `call-${calls}`, name: "read", args: { path: "a.txt" } }], usage_metadata: { input_tokens: 100, output_tokens: 7, total_tokens: 107 }, response_metadata: { model_name: "gpt-x" } })] };
        }
        return { messages: [new AIMessage({ content: `it says hello (${calls})`, usage_metadata: { input_tokens: 120, output_tokens: 4, total_tokens: 124 } })] };
      })
      .addNode("tools", (s) => ({ messages: [new ToolMessage({ content: "hello ✓", tool_call_id: (s.messages.at(-1) as AIMessage).tool_calls![0].id!, name: "read" })] }))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END))
      .addEdge("tools", "agent")
      .compile({ checkpointer: new CairnSaver({ client: server.client }) });
    const config = { configurable: { thread_id: "t1" } };
    await graph.invoke({ messages: [new SystemMessage("be brief"), new HumanMessage("what is in a.txt?")] }, config);
    ends.push((await graph.invoke({ messages: [new HumanMessage("and again?")] }, config)).messages);
    let after;
    for await (const st of graph.getStateHistory(config)) {
      if (st.values.messages?.length === 5 && st.next.length === 0) after = st;
    }
    ends.push((await graph.invoke({ messages: [new HumanMessage("fork question")] }, after!.config)).messages);
  } finally {
    await server.close();
  }
  const out = tempDir("lg-export") + "/chat.jsonl";
  execFileSync(bin!, ["--store", store, "export", "--format", "openai-jsonl", "--out", out], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const lines = readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  expect(lines).toHaveLength(2);
  const got = lines.map((l) => JSON.stringify(l.messages)).sort();
  const want = ends.map((msgs) => JSON.stringify(msgs.map(openAI))).sort();
  expect(got).toEqual(want);
  for (const l of lines) expect(l.metadata.model).toBe("gpt-x");
});
