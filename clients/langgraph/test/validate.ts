// Runs LangGraph's own checkpointer validation suite against a CairnSaver
// on a real cairn serve over the given store. Each checkpointer the suite
// creates gets its own session prefix, so suites never see each other's
// threads; the saver's name is ours, so the suite skips none of its tests.
import { randomBytes } from "node:crypto";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { startServer, type LocalServer } from "@cairnlog/client/local";
import { CairnSaver } from "../src/index.js";

export function validateOn(name: string, bin: string, store: () => Promise<{ url: string; env?: Record<string, string>; stop?: () => Promise<void> }>) {
  let srv: LocalServer | undefined;
  let stop: (() => Promise<void>) | undefined;
  validate<CairnSaver>({
    checkpointerName: `@cairnlog/langgraph-checkpoint on ${name}`,
    beforeAllTimeout: 120_000,
    async beforeAll() {
      const s = await store();
      stop = s.stop;
      srv = await startServer({ bin, store: s.url, env: s.env });
    },
    async afterAll() {
      await srv?.close();
      await stop?.();
    },
    createCheckpointer() {
      return new CairnSaver({ client: srv!.client, prefix: "v" + randomBytes(6).toString("hex") });
    },
    async destroyCheckpointer(saver) {
      for (const s of await saver.client.sessions(saver.prefix + ".")) await saver.client.remove(s.session);
    },
  });
}
