// ListSerializer gives the text LangGraph's serializer gives a list, and
// sees every change to an element, however deep, made in place.
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { ListSerializer } from "../src/elements.js";

const serde = new JsonPlusSerializer();
async function whole(list: unknown[]): Promise<string> {
  const [, data] = await serde.dumpsTyped(list);
  return typeof data === "string" ? data : new TextDecoder().decode(data);
}

describe("ListSerializer", () => {
  it("says what the serializer says, and sees changes made in place", async () => {
    const ls = new ListSerializer(serde);
    expect(ListSerializer.applies(serde)).toBe(true);
    const list: unknown[] = [
      new HumanMessage("hi é ✓"),
      new AIMessage({ content: "calling", tool_calls: [{ id: "c1", name: "search", args: { q: "x" } }], additional_kwargs: { deep: { n: 1 } } }),
      new ToolMessage({ content: "result", tool_call_id: "c1" }),
      { plain: [1, "two", null, { three: 3 }] },
    ];
    expect(await ls.text(list)).toBe(await whole(list));
    expect(await ls.text(list)).toBe(await whole(list));
    // In place, at the top and deep down: seen.
    (list[0] as HumanMessage).content = "changed";
    expect(await ls.text(list)).toBe(await whole(list));
    expect(await ls.text(list)).toContain("changed");
    ((list[1] as AIMessage).additional_kwargs.deep as { n: number }).n = 2;
    ((list[1] as AIMessage).tool_calls![0].args as { q: string }).q = "y";
    (((list[3] as { plain: unknown[] }).plain[3]) as { three: number }).three = 33;
    expect(await ls.text(list)).toBe(await whole(list));
    expect(await ls.text(list)).toContain('"three":33');
    // A longer list reuses the texts of the elements it had.
    const longer = [...list, new AIMessage("more")];
    expect(await ls.text(longer)).toBe(await whole(longer));
  });

  it("serialises an element again only when it changed", async () => {
    const counted = new JsonPlusSerializer();
    let calls = 0;
    const dumps = counted.dumpsTyped.bind(counted);
    counted.dumpsTyped = async (v: unknown) => (calls++, dumps(v));
    const ls = new ListSerializer(counted);
    const list = [new HumanMessage("a"), new AIMessage("b"), new AIMessage("c")];
    await ls.text(list);
    expect(calls).toBe(3);
    await ls.text([...list, new AIMessage("d")]);
    expect(calls).toBe(4);
    list[1].content = "b2";
    expect(await ls.text(list)).toBe(await whole(list));
    expect(calls).toBe(5);
  });

  it("declines what it cannot see into: the list itself, internal slots, scalars", async () => {
    const ls = new ListSerializer(serde);
    const self: unknown[] = [];
    self.push({ back: self });
    expect(await ls.text(self)).toBeUndefined();
    expect(await ls.text([{ m: new Map([["a", 1]]) }])).toBeUndefined();
    expect(await ls.text([{ d: new Date(0) }])).toBeUndefined();
    expect(await ls.text([1, 2])).toBeUndefined();
    class Custom extends JsonPlusSerializer {}
    expect(ListSerializer.applies(new Custom())).toBe(false);
  });
  it("sees added, removed and re-pointed properties, also of objects an element reaches twice", async () => {
    const ls = new ListSerializer(serde);
    const shared: Record<string, unknown> = { k: 1 };
    const el: Record<string, unknown> = { a: shared, b: { inner: shared }, c: [shared, shared] };
    const list = [el, new AIMessage("x")];
    const check = async () => expect(await ls.text(list)).toBe(await whole(list));
    await check();
    await check();
    shared.k = 2; // reached three times: one change
    await check();
    shared.added = true; // one more property, at the end of an object
    await check();
    delete shared.added;
    await check();
    (el.b as Record<string, unknown>).inner = { k: 2 }; // the same text, another object
    await check();
    (el.b as Record<string, unknown>).inner = { k: 3 };
    await check();
    (el.c as unknown[])[1] = { k: 4 };
    await check();
    el.d = "new";
    await check();
    expect(await ls.text(list)).toContain('"d":"new"');
  });
});
