/**
 * encode: a request body's JSON text, refusing what JSON.stringify would
 * change rather than send. Shared by the client (every body it sends) and
 * makePatch (which refuses what committing the new state whole refuses).
 */
import { randomUUID } from "node:crypto";
import { InvalidError } from "./index.js";

/** tooDeep reports whether JSON.stringify failed for want of stack (not, say, a string too long). */
function tooDeep(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/**
 * encode is a request body's JSON text. What JSON.stringify would change
 * rather than send is refused, naming the field and the value's place in
 * it (a JSON pointer), as the Python client refuses it: NaN and the
 * infinities (sent as null) are InvalidError; a function or a symbol (a
 * member left out, an array element sent as null), an array element that
 * is undefined or a hole (sent as null), a BigInt, a Map or a Set (sent as
 * {}), and any other object that is neither a plain
 * object nor an array and has no toJSON (a class's instance, a typed
 * array, a RegExp: sent as its own enumerable members, read back as a
 * plain object) are TypeError. A toJSON is honoured, as JSON.stringify
 * honours it (a Date is its ISO text). A member whose value is undefined
 * is left out, as JSON.stringify leaves it out: it reads back absent,
 * which JavaScript reads as undefined, the value it had (a field of the
 * body itself left out is named by the server: "state is required").
 * -0 is sent as -0, as JSON writes it (JSON.stringify writes 0, another
 * number text and so another state). A structure nested too deep for
 * JSON.stringify (its RangeError for the call stack) is InvalidError too,
 * as the server says of one past its own limit. JSON.stringify's other
 * errors (a structure that holds itself, a text past the longest string
 * Node makes) go out as they are. Half a surrogate pair goes out escaped,
 * and the server's 400 names the field.
 */
export function encode(body: Record<string, unknown>): string {
  let field = "request body";
  let negativeZero = false;
  // The refused value's place in its field: "" for the field itself.
  const at = (holder: unknown, key: string) => (holder === body ? "" : ` at ${pointer(body[field], holder, key)}`);
  const check = function (this: unknown, key: string, value: unknown): unknown {
    if (this === body) field = key;
    switch (typeof value) {
      case "number":
        if (!Number.isFinite(value)) {
          throw new InvalidError(400, "bad_request", `${field}: the value${at(this, key)} is ${value}, which JSON has no number for (JSON.stringify would send it as null): send null or a string instead`);
        }
        if (value === 0 && 1 / value < 0) {
          negativeZero = true;
          return negativeZeroMark;
        }
        return value;
      case "undefined":
        // A member left out reads back as undefined, as it was; an element would read back as null.
        if (!Array.isArray(this)) return value;
      // falls through
      case "function":
      case "symbol": {
        const what = value === undefined ? "undefined" : `a ${typeof value}`;
        const sent = Array.isArray(this) ? "send it as null" : "leave the member out";
        throw new TypeError(`${field}: the value${at(this, key)} is ${what}, which JSON has no form for (JSON.stringify would ${sent}): send null${Array.isArray(this) ? "" : ", or leave it out"}`);
      }
      case "bigint":
        throw new TypeError(`${field}: the value${at(this, key)} is a BigInt, which JSON has no form for: send it as a string (String(n)), or as a number if it is at most 2^53`);
      case "object":
        if (value === null || Array.isArray(value) || plain(value)) return value;
        if (value instanceof Map || value instanceof Set) {
          const kind = value instanceof Map ? "Map" : "Set";
          throw new TypeError(`${field}: the value${at(this, key)} is a ${kind}, which has no JSON form (JSON.stringify would send it as {}): send ${kind === "Map" ? "Object.fromEntries(m) or [...m]" : "[...s]"} instead`);
        }
        // A Number, String or Boolean object is sent as its value; a toJSON's result was asked for.
        if (value instanceof Number || value instanceof String || value instanceof Boolean || typeof (value as { toJSON?: unknown }).toJSON === "function") return value;
        throw new TypeError(`${field}: the value${at(this, key)} is ${kindOf(value)}, not a plain object or an array: JSON.stringify would send its own enumerable members, and it would read back as a plain object: send a plain object, or give it a toJSON`);
    }
    return value;
  };
  let text: string;
  try {
    text = JSON.stringify(body, check);
  } catch (e) {
    if (!tooDeep(e)) throw e;
    throw new InvalidError(400, "bad_request", `${field}: nested too deep to send as JSON`);
  }
  // The mark is a string no caller can know (a random UUID's): only -0 is written as it.
  return negativeZero ? text.split(JSON.stringify(negativeZeroMark)).join("-0") : text;
}

/** What encode writes in place of -0, then replaces by -0 in the text. */
const negativeZeroMark = `cairn -0 ${randomUUID()}`;

/** kindOf names an object that is no plain object by its constructor: "a Uint8Array", "a Point", "an Error"; else "an object". */
function kindOf(v: object): string {
  const c = (v as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof c !== "string" || c === "" || c === "Object") return "an object";
  return `${/^[AEIO]/.test(c) ? "an" : "a"} ${c}`;
}

/**
 * pointer is the place of holder[key] in root (a field of a body), as a
 * JSON pointer (as diff names paths): found by a walk from root, once a
 * value is refused, as JSON.stringify walked it (toJSON applied).
 */
function pointer(root: unknown, holder: unknown, key: string): string {
  const token = (k: string) => "/" + k.replace(/~/g, "~0").replace(/\//g, "~1");
  const seen = new Set<unknown>();
  const find = (v: unknown, at: string): string | undefined => {
    if (v === holder) return at;
    if (typeof v !== "object" || v === null || seen.has(v)) return undefined;
    seen.add(v);
    for (const k of Object.keys(v)) {
      let x = (v as Record<string, unknown>)[k];
      if (typeof x === "object" && x !== null && typeof (x as { toJSON?: unknown }).toJSON === "function") x = (x as { toJSON(k: string): unknown }).toJSON(k);
      const found = find(x, at + token(k));
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return (find(root, "") ?? "") + token(key);
}


/** plain reports whether v is a plain object ({...} or Object.create(null), of any realm): not an array, a class's instance, a Map, .... */
export function plain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** shown is a value of the wrong type, as an error names it: null, undefined, a number or a boolean as it is, else its kind. */
export function shown(v: unknown): string {
  if (v === null || ["undefined", "number", "boolean"].includes(typeof v)) return String(v);
  return `${typeof v === "object" ? "an" : "a"} ${typeof v}`;
}
