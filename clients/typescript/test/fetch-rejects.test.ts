// A fetch the caller gives may reject with anything, not only an Error:
// each is an UnavailableError in words, never a TypeError from inside the client.
import { describe, expect, it } from "vitest";
import { CairnClient, UnavailableError } from "../src/index.js";

describe("a fetch that rejects with no Error", () => {
  it("is unreachable, saying with what", async () => {
    // null and undefined failed with "Cannot read properties of undefined (reading 'code')".
    const url = "http://127.0.0.1:9";
    for (const bad of [undefined, null, "boom", 5]) {
      const c = new CairnClient({ url, fetch: (async () => Promise.reject(bad)) as unknown as typeof fetch });
      const e = await c.head("s").catch((x) => x);
      expect(e, String(bad)).toBeInstanceOf(UnavailableError);
      expect(e.message).toBe(`cairn: 0 unreachable: could not reach the cairn server at ${url}: the fetch rejected with ${String(bad)}`);
      const w = await c.commit("s", {}, { idempotencyKey: "k-1" }).catch((x) => x);
      expect(w, String(bad)).toBeInstanceOf(UnavailableError);
      expect(w.idempotencyKey).toBe("k-1");
      expect(w.message).toBe(
        `cairn: 0 unreachable: could not reach the cairn server at ${url}: the fetch rejected with ${String(bad)}; the commit may have taken effect: retry it with idempotencyKey "k-1", which answers with its step if it landed and never writes a second one`,
      );
    }
  });
});
