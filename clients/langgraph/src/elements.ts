/**
 * Serialising a list element by element, each element once while it stays
 * the same: LangGraph hands a checkpointer the whole message list at every
 * step, and serialising it all again costs the list, not the message.
 */
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";

/**
 * What an element's serialisation depended on: every object reachable
 * from it, each own property and its value (items), and where in items
 * each object was first reached (at), so that checking it again walks
 * the element once and allocates nothing.
 */
interface Snapshot {
  items: unknown[];
  at: Map<object, number>;
}

/** Bound on the objects and properties one element's snapshot may record. */
const maxSnapshot = 4096;

/**
 * ListSerializer serialises lists as LangGraph's default serializer does,
 * reusing the text of an element it serialised before when nothing
 * reachable from the element has changed since: the same objects, each
 * with the same properties holding the same values (compared by identity,
 * so an element mutated in place, at any depth, is serialised again).
 */
export class ListSerializer {
  private readonly seen = new WeakMap<object, { text: string; snap: Snapshot }>();

  /** It applies only to LangGraph's own JsonPlusSerializer, whose text for a list is "[" + its elements' texts joined by "," + "]". */
  static applies(serde: SerializerProtocol): boolean {
    return Object.getPrototypeOf(serde) === JsonPlusSerializer.prototype;
  }

  constructor(private readonly serde: SerializerProtocol) {}

  /** text returns the JSON text the serializer gives list, or undefined where it cannot say it element by element. */
  async text(list: unknown[]): Promise<string | undefined> {
    const parts = await this.parts(list);
    return parts && "[" + parts.join(",") + "]";
  }

  /**
   * parts returns the JSON text of each element of list, as text would
   * join them; an element unchanged since an earlier call gives the very
   * same string.
   */
  async parts(list: unknown[]): Promise<string[] | undefined> {
    const parts: string[] = [];
    for (const el of list) {
      if (typeof el !== "object" || el === null) return undefined;
      const hit = this.seen.get(el);
      if (hit && same(el, hit.snap, list)) {
        parts.push(hit.text);
        continue;
      }
      const snap = snapshot(el, list);
      if (!snap) return undefined;
      const [type, data] = await this.serde.dumpsTyped(el);
      if (type !== "json") return undefined;
      const text = typeof data === "string" ? data : new TextDecoder().decode(data);
      // Taken again after serialising: a toJSON that changes what it reads is not cached.
      if (!same(el, snap, list)) return undefined;
      this.seen.set(el, { text, snap });
      parts.push(text);
    }
    return parts;
  }
}

/**
 * snapshot records, in a fixed order, every object reachable from root
 * through own properties and each property's value; undefined if it
 * reaches list itself (its text then depends on the list), an accessor
 * property, or is too large.
 */
function snapshot(root: object, list: unknown[]): Snapshot | undefined {
  const out: unknown[] = [];
  const at = new Map<object, number>();
  const walk = (o: object): boolean => {
    if (o === list || hidden(o)) return false;
    if (at.has(o)) return true;
    at.set(o, out.length);
    out.push(o, Object.getPrototypeOf(o));
    for (const k of Object.getOwnPropertyNames(o)) {
      const d = Object.getOwnPropertyDescriptor(o, k)!;
      if (d.get || d.set) return false;
      out.push(k, d.value);
      if (out.length > maxSnapshot) return false;
      if (typeof d.value === "object" && d.value !== null && !walk(d.value)) return false;
    }
    out.push(undefined); // the end of o's properties
    return true;
  };
  return walk(root) ? { items: out, at } : undefined;
}

/** hidden: o keeps what it serialises to in internal slots, out of a snapshot's sight. */
function hidden(o: object): boolean {
  return (
    o instanceof Map || o instanceof Set || o instanceof Date || o instanceof ArrayBuffer || ArrayBuffer.isView(o) ||
    o instanceof Number || o instanceof String || o instanceof Boolean || o instanceof WeakMap || o instanceof WeakSet
  );
}

/**
 * same reports whether snapshotting root again gives snap. It walks root
 * as snapshot does, comparing as it goes: while all it has seen matches,
 * the objects it has visited are those snap reached before the current
 * position, which snap.at tells without a set of its own.
 */
function same(root: object, snap: Snapshot, list: unknown[]): boolean {
  const { items, at } = snap;
  let i = 0;
  const walk = (o: object): boolean => {
    if (o === list || hidden(o)) return false;
    const first = at.get(o);
    if (first !== undefined && first < i) return true;
    if (items[i] !== o || items[i + 1] !== Object.getPrototypeOf(o)) return false;
    i += 2;
    for (const k of Object.getOwnPropertyNames(o)) {
      const d = Object.getOwnPropertyDescriptor(o, k)!;
      if (d.get || d.set || items[i] !== k || items[i + 1] !== d.value) return false;
      i += 2;
      if (typeof d.value === "object" && d.value !== null && !walk(d.value)) return false;
    }
    // The end of o's properties: no name is undefined, so one more property fails here.
    if (i >= items.length || items[i] !== undefined) return false;
    i++;
    return true;
  };
  return walk(root) && i === items.length;
}
