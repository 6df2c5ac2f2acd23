/**
 * makePatch: the JSON Patch that turns one JSON state into the next, for
 * {@link CairnClient.patch}.
 */
import { encode, shown } from "./encode.js";
import { InvalidError, type PatchOp } from "./index.js";

/** Options of {@link makePatch}. */
export interface MakePatchOptions {
  /** Give up (return undefined) past this many operations (default 1000). */
  maxOps?: number;
}

/**
 * makePatch returns the operations that turn state `from` into state `to`
 * on the server such that the stored text is byte for byte what committing
 * `to` whole stores (members in `to`'s order, JSON.stringify's text), or
 * undefined when it cannot say so in a patch (the roots differ in kind, or
 * past maxOps): then commit `to` whole. `from` must be the state the patch
 * applies to, as this client committed it or read it back (-0 as -0, as
 * the client sends it), or as JSON.parse read it back from text that
 * JSON.stringify wrote (text written otherwise, such as "1.50"
 * or "\u00e9", is kept where unchanged, as a patch does). Parts of `to` equal to parts of `from` are replaced by
 * those parts (shared, not copied), so a caller that keeps both keeps one.
 *
 * `to` is read as the client sends a whole state: what committing it
 * whole refuses, makePatch refuses in the same words, naming the place in
 * `to` (NaN and the infinities are InvalidError; an array element that is
 * undefined or a hole, a function, a symbol, a BigInt, a Map or a Set, an
 * object that is no plain object and has no toJSON are TypeError); a
 * member whose value is undefined is left out, and a toJSON is honoured
 * (a Date is its ISO text), as JSON.stringify does.
 */
export function makePatch(from: unknown, to: unknown, opts: MakePatchOptions = {}): PatchOp[] | undefined {
  // The checks of a whole commit, with its words: a patch made of what
  // JSON.stringify would change (an undefined element as null, a function
  // member left out) would store another state than the commit refuses.
  if (opts === null || typeof opts !== "object") throw new TypeError(`options: want an object of options, not ${shown(opts)}`);
  const max = opts.maxOps === undefined ? 1000 : opts.maxOps;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 0) {
    // NaN made every patch unbounded, "5" was compared as a number, -1 gave up on every one.
    throw new InvalidError(400, "bad_request", `maxOps: want a whole number >= 0, not ${typeof max === "string" ? JSON.stringify(max) : shown(max)}`);
  }
  encode({ state: to });
  const a = json(from, "state");
  const b = json(to, "state");
  if (kind(a) !== kind(b) || kind(b) === "scalar") return undefined;
  const d = new Differ(max);
  try {
    d.value(a, b, "");
  } catch (e) {
    if (e === tooMany) return undefined;
    throw e;
  }
  return d.ops;
}

const tooMany = new Error("too many operations");

class Differ {
  readonly ops: PatchOp[] = [];
  constructor(private readonly max: number) {}

  private push(op: PatchOp): void {
    if (this.ops.length >= this.max) throw tooMany;
    this.ops.push(op);
  }

  /**
   * value adds the ops that turn a into b at path; it reports whether a
   * and b are equal. a and b are as JSON.stringify reads them (json()).
   */
  value(a: unknown, b: unknown, path: string): boolean {
    // Object.is: the client sends -0 as -0, another number text than 0.
    if (Object.is(a, b)) return true;
    const ka = kind(a);
    if (ka !== kind(b)) {
      this.push({ op: "replace", path, value: b });
      return false;
    }
    if (ka === "object") return this.object(a as Record<string, unknown>, b as Record<string, unknown>, path);
    if (ka === "array") return this.array(a as unknown[], b as unknown[], path);
    // Scalars: the same JSON text is the same value (0 and -0 differ: the client sends -0 as -0).
    if (JSON.stringify(a) === JSON.stringify(b) && !(a === 0 && b === 0)) return true;
    this.push({ op: "replace", path, value: b });
    return false;
  }

  private object(a: Record<string, unknown>, b: Record<string, unknown>, path: string): boolean {
    const av = members(a);
    const bv = members(b);
    const ak = [...av.keys()];
    const bk = [...bv.keys()];
    const kept = ak.filter((k) => bv.has(k));
    // The server keeps a member's place and adds new members last: b's
    // order must be a's kept members, then new ones whose name the server
    // writes as JSON.stringify does. Else b replaces a whole.
    let ordered = kept.every((k, i) => bk[i] === k);
    for (let i = kept.length; ordered && i < bk.length; i++) ordered = !av.has(bk[i]) && plainKey(bk[i]);
    if (!ordered) {
      this.push({ op: "replace", path, value: b });
      return false;
    }
    let same = kept.length === ak.length && kept.length === bk.length;
    for (const k of ak) if (!bv.has(k)) this.push({ op: "remove", path: path + "/" + escape(k) });
    for (const k of kept) {
      const x = av.get(k);
      const y = bv.get(k);
      if (this.value(x, y, path + "/" + escape(k))) {
        // Shared, unless either was read through a toJSON (a Date is not its text).
        if (x === a[k] && y === b[k]) b[k] = a[k];
      } else same = false;
    }
    for (let i = kept.length; i < bk.length; i++) this.push({ op: "add", path: path + "/" + escape(bk[i]), value: bv.get(bk[i]) });
    return same;
  }

  private array(a: unknown[], b: unknown[], path: string): boolean {
    if (b.length === 0) {
      if (a.length === 0) return true;
      this.push({ op: "replace", path, value: b });
      return false;
    }
    let same = a.length === b.length;
    // Drop a's extra elements from the end, so that the indexes before them hold.
    for (let i = a.length - 1; i >= b.length; i--) this.push({ op: "remove", path: `${path}/${i}` });
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = json(a[i], String(i));
      const y = json(b[i], String(i));
      if (this.value(x, y, `${path}/${i}`)) {
        if (x === a[i] && y === b[i]) b[i] = a[i];
      } else same = false;
    }
    for (let i = n; i < b.length; i++) this.push({ op: "add", path: path + "/-", value: json(b[i], String(i)) });
    return same;
  }
}

type Kind = "object" | "array" | "scalar";

function kind(v: unknown): Kind {
  if (Array.isArray(v)) return "array";
  if (typeof v === "object" && v !== null) return "object";
  return "scalar";
}

/**
 * json is v as JSON.stringify reads it under the member name key: a
 * toJSON's result (a Date's ISO text), a Number, String or Boolean
 * object's value; else v itself.
 */
function json(v: unknown, key: string): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") return (v as { toJSON(k: string): unknown }).toJSON(key);
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return v.valueOf();
  return v;
}

/**
 * members maps the names JSON.stringify writes to their values as it
 * reads them (json()): those whose value is not undefined (nor, in a
 * state read back, a function).
 */
function members(o: Record<string, unknown>): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const k of Object.keys(o)) {
    const v = json(o[k], k);
    if (v !== undefined && typeof v !== "function" && typeof v !== "symbol") m.set(k, v);
  }
  return m;
}

/** plainKey: the server writes this member name as JSON.stringify does (no escapes, no U+2028/9, no lone surrogates). */
function plainKey(k: string): boolean {
  return /^[\u0020-\u0021\u0023-\u005b\u005d-\u2027\u202a-\ud7ff\ue000-\u{10ffff}]*$/u.test(k);
}

/** escape encodes a member name as an RFC 6901 pointer token. */
function escape(k: string): string {
  return k.replace(/~/g, "~0").replace(/\//g, "~1");
}
