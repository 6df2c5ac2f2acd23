// A LangGraph graph that checkpoints into cairn. It starts a private
// `cairn serve` over the store given as the first argument (cairn from
// $CAIRN_BIN or PATH), runs two turns on one thread, and prints the
// thread's checkpoints, newest first.
//
//   node clients/langgraph/examples/quickstart.mjs STORE_DIR
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { startServer } from "@cairnlog/client/local";
import { CairnSaver } from "@cairnlog/langgraph-checkpoint";

const server = await startServer({ store: process.argv[2] });
try {
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("echo", (s) => ({ messages: [new AIMessage(`you said: ${s.messages.at(-1).content}`)] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile({ checkpointer: new CairnSaver({ client: server.client }) });
  const config = { configurable: { thread_id: "quickstart" } };
  await graph.invoke({ messages: [new HumanMessage("hello")] }, config);
  const out = await graph.invoke({ messages: [new HumanMessage("again")] }, config);
  console.log(out.messages.map((m) => m.content).join(" | "));
  for await (const t of new CairnSaver({ client: server.client }).list(config)) {
    console.log(t.checkpoint.id, t.metadata.source, t.metadata.step);
  }
} finally {
  await server.close();
}
