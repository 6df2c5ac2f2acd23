// One step of the end-to-end test, run as its own Node process against
// the cairn serve at $CAIRN_URL ($CAIRN_TOKEN):
//   node agent.mjs start THREAD    run until the graph asks for approval
//   node agent.mjs resume THREAD   answer "approve" with Command({resume})
//   node agent.mjs fork THREAD     go back to the checkpoint before the plan
//                                  (time travel), run from there to a new
//                                  question on a branch, answer "reject"
// It prints one JSON line with what it saw.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { CairnSaver } from "../../dist/index.js";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  decision: Annotation(),
});

const graph = new StateGraph(State)
  .addNode("plan", () => ({ messages: [new AIMessage("plan: delete the old logs")] }))
  .addNode("approve", () => {
    const answer = interrupt({ question: "May I delete the old logs?" });
    return { decision: answer, messages: [new HumanMessage(`answer: ${answer}`)] };
  })
  .addNode("act", (s) => ({ messages: [new AIMessage(s.decision === "approve" ? "deleted the old logs" : "kept the old logs")] }))
  .addEdge(START, "plan")
  .addEdge("plan", "approve")
  .addEdge("approve", "act")
  .addEdge("act", END)
  .compile({ checkpointer: new CairnSaver() });

const [phase, thread] = process.argv.slice(2);
const config = { configurable: { thread_id: thread } };
let out;
if (phase === "start") {
  const r = await graph.invoke({ messages: [new HumanMessage("tidy up the disk")] }, config);
  out = { interrupt: r.__interrupt__?.[0]?.value, next: (await graph.getState(config)).next };
} else if (phase === "resume") {
  const r = await graph.invoke(new Command({ resume: "approve" }), config);
  out = { decision: r.decision, last: r.messages.at(-1).content };
} else if (phase === "fork") {
  let before;
  for await (const snap of graph.getStateHistory(config)) {
    if (snap.next.includes("plan")) before = snap;
  }
  const asked = await graph.invoke(null, before.config);
  const r = await graph.invoke(new Command({ resume: "reject" }), config);
  const latest = await graph.getState(config);
  out = {
    from: before.config.configurable.checkpoint_id,
    interrupt: asked.__interrupt__?.[0]?.value,
    decision: r.decision,
    last: r.messages.at(-1).content,
    latestDecision: latest.values.decision,
    latestParent: latest.parentConfig?.configurable?.checkpoint_id,
  };
} else {
  console.error("usage: node agent.mjs start|resume|fork THREAD");
  process.exit(2);
}
console.log(JSON.stringify(out));
