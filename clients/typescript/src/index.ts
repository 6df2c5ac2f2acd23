/**
 * A client for the cairn HTTP API (`cairn serve`, and `cairn run` for its
 * child at $CAIRN_URL). Every request and answer is typed from the API's
 * OpenAPI document (openapi.ts, generated from
 * internal/httpapi/openapi.json). It needs nothing but Node's own
 * modules: requests go out through node:http (or node:https) on kept-alive
 * connections, which costs a fraction of what fetch does a request, or
 * through a fetch the caller passes.
 *
 * Errors come back as exceptions: {@link ConflictError} (409: another
 * writer got the step first, or `expect` did not hold), {@link
 * NotFoundError} (404), {@link InvalidError} (400), {@link LimitError}
 * (413, 422), {@link UnauthorizedError} (401, 403), {@link
 * UnavailableError} (503: the server's store could not be reached, or the
 * server is busy), {@link StoreRefusedError} (502: the server's store
 * refused the request), all subclasses of {@link CairnError}: the same
 * kinds the Python client raises for the same answers.
 */
import { randomUUID } from "node:crypto";
import { defaultMaxListeners, getMaxListeners, setMaxListeners } from "node:events";
import * as http from "node:http";
import * as https from "node:https";
import { encode, plain, shown } from "./encode.js";
import { serverGone } from "./internal.js";
import type { components, operations } from "./openapi.js";

export type { components, operations, paths } from "./openapi.js";
export { makePatch, type MakePatchOptions } from "./patch.js";

/** A step as the API returns it: its number, ids, record and, on reads, its state. */
export type Step = components["schemas"]["Step"];
/** One entry of {@link CairnClient.sessions}. */
export type SessionInfo = components["schemas"]["SessionInfo"];
/** One session whose head awaits a human. */
export type Pending = components["schemas"]["Pending"];
/** One entry of a diff. */
export type Change = components["schemas"]["Change"];
/** A step's status. */
export type Status = Step["status"];
/** The body of a commit. */
export type CommitRequest = components["schemas"]["CommitRequest"];
/** The answer to {@link CairnClient.remove}. */
export type Removed = components["schemas"]["Removed"];
/**
 * One operation of an RFC 6902 JSON Patch, as {@link CairnClient.patch}
 * sends it: add (a path ending in "/-" appends to an array), remove,
 * replace, move, copy or test.
 */
export type PatchOp =
  | { op: "add" | "replace" | "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };
/** An error answer's machine-readable code. */
export type ErrorCode = components["schemas"]["Error"]["code"];

/** An error answer from the server: its HTTP status, code and message. */
export class CairnError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The API's error code (bad_request, not_found, conflict, ...). */
  readonly code: ErrorCode | string;
  constructor(status: number, code: string, message: string) {
    super(`cairn: ${status} ${code}: ${message}`);
    this.name = "CairnError";
    this.status = status;
    this.code = code;
  }
}

/** 409: another writer got the step first, the expected head did not hold, or the session exists. */
export class ConflictError extends CairnError {
  /** The session's head as the server saw it, when it says. */
  readonly head: number | undefined;
  constructor(status: number, code: string, message: string, head?: number) {
    super(status, code, message);
    this.name = "ConflictError";
    this.head = head;
  }
}

/** 404: no such session, step or route. */
export class NotFoundError extends CairnError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = "NotFoundError";
  }
}

/**
 * 400: a bad session name, step number, parameter or body. Also thrown,
 * with status 0 and code "closed", by a call on a closed client
 * ({@link CairnClient.close}): nothing was sent, or the call under way was
 * cut off; and, with status 400, for a bad argument refused before
 * anything is sent, in the server's words.
 */
export class InvalidError extends CairnError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = "InvalidError";
  }
}

/**
 * 413: a request body or reply over the server's limit; 422: a stored
 * state or step beyond the server's read limits (CAIRN_MAX_VALUE_BYTES, …).
 */
export class LimitError extends CairnError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = "LimitError";
  }
}

/** 401 or 403: a missing or wrong token, or a request from another site. */
export class UnauthorizedError extends CairnError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = "UnauthorizedError";
  }
}

/**
 * 503: the server's store could not be reached or did not answer, or no
 * credentials were found for it (code "unavailable": the message names
 * the store and what went undone: a commit's step was not written, or may
 * have been); or the server is at its limit of concurrent requests (code
 * "busy"). Either may pass: try again later. Also thrown, with status 0
 * and code "unreachable", when the server itself could not be reached or
 * did not answer: the message says whether a request that writes may have
 * taken effect.
 */
export class UnavailableError extends CairnError {
  /** On a commit's error: the idempotency key it was sent with; retrying with it lands the step once. */
  idempotencyKey: string | undefined;
  /** False when the request never reached the server (status 0 only). */
  sent = true;
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = "UnavailableError";
  }
}

/**
 * 502 with code "store_refused": the server's store answered and refused
 * the request outright (credentials it does not accept, a policy that
 * denies it, a bucket that does not exist, a region other than the
 * bucket's; on a local store, files the server's user may not use or a
 * full disk). The server works; the store will refuse the same until its
 * configuration or the server's store URL changes, so retrying does not
 * help. The message names the store and what went undone (a commit's
 * step was not written, or may have been). A 502 with any other code (a
 * proxy's, say) is a plain {@link CairnError}.
 */
export class StoreRefusedError extends CairnError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
    this.name = "StoreRefusedError";
  }
}

function errorFor(status: number, code: string, message: string, head?: number): CairnError {
  if (status === 502 && code === "store_refused") return new StoreRefusedError(status, code, message);
  switch (status) {
    case 409:
      return new ConflictError(status, code, message, head);
    case 404:
      return new NotFoundError(status, code, message);
    case 400:
      return new InvalidError(status, code, message);
    case 413:
    case 422:
      return new LimitError(status, code, message);
    case 401:
    case 403:
      return new UnauthorizedError(status, code, message);
    case 503:
      return new UnavailableError(status, code, message);
  }
  return new CairnError(status, code, message);
}

/**
 * Emitted (process.emitWarning, Node's warnings: printed to stderr unless
 * a "warning" listener or --no-warnings says otherwise) when a listing
 * (sessions, inbox) passed over sessions the store holds damaged; the
 * others were listed, as the Python client's UnreadableSessionsWarning
 * says. `unreadable` is the server's list of {session, error}; `cairn
 * verify` names the damaged objects.
 */
export class UnreadableSessionsWarning extends Error {
  readonly unreadable: components["schemas"]["Unreadable"];
  constructor(unreadable: components["schemas"]["Unreadable"]) {
    const names = unreadable.slice(0, 5).map((u) => u.session).join(", ");
    const more = unreadable.length > 5 ? ` and ${unreadable.length - 5} more` : "";
    super(`cairn: ${unreadable.length} session(s) could not be read (damage in the store): ${names}${more}`);
    this.name = "UnreadableSessionsWarning";
    this.unreadable = unreadable;
  }
}

/** listed warns about the sessions a listing passed over. */
function listed(unreadable: components["schemas"]["Unreadable"] | undefined): void {
  if (unreadable?.length) process.emitWarning(new UnreadableSessionsWarning(unreadable));
}

/** Options of a {@link CairnClient}. */
export interface ClientOptions {
  /** The server's URL (default, also for null: $CAIRN_URL). */
  url?: string | null;
  /** The bearer token (default, also for null: $CAIRN_TOKEN; none: a loopback server without one). */
  token?: string | null;
  /** Seconds a request may take before it is aborted (default 90; long-polls add their wait). */
  timeout?: number;
  /**
   * A fetch to send requests through (default none: node:http or
   * node:https, on connections kept alive between requests).
   */
  fetch?: typeof fetch | null;
}

/**
 * What every call takes: a signal that cancels it. A cancelled call
 * rejects with the signal's reason (an `AbortError` DOMException unless
 * the caller gave another); a commit, reply, fork or removal cancelled
 * after its request went out may still have taken effect: read the head.
 */
export interface CallOptions {
  /** undefined or null: none, as fetch takes it. */
  signal?: AbortSignal | null;
}

/** What to commit: a JSON state, and optionally a record, a status and the head it expects. */
export interface CommitOptions extends CallOptions {
  /** What happened this step (any JSON value). */
  record?: unknown;
  /** running (default), awaiting_input or done. */
  status?: Status;
  /**
   * Fail with ConflictError unless the head is this step (0: the session
   * must not exist). Left out, undefined or null: no fence, as Python's
   * expect=None.
   */
  expect?: number | null;
  /**
   * Names this commit (1-128 printable ASCII characters, no spaces): sent
   * again with the same key, a commit whose step already landed is
   * answered with that step (its `replayed` is true) and writes no second
   * one; the key on another step is a ConflictError. Default: a fresh key
   * (a random UUID) for this call. A commit whose answer is lost (a reset
   * connection, a timeout, a 503) is sent again with its key, up to
   * {@link CairnClient.commitRetries} times, once this client has seen the
   * server store a key (an older server ignores the header, and a retry
   * there could write the step twice); otherwise, or when the retries are
   * spent, the UnavailableError carries the key (`idempotencyKey`) to
   * retry with. A worker that may be restarted passes a key of its own
   * that it can give again, such as `${job}/${turn}`. undefined or null:
   * a fresh key, as Python's idempotency_key=None.
   */
  idempotencyKey?: string | null;
}

/** idempotencyKey returns key, checked as the server checks it, or a fresh one. */
function idempotencyKey(key: string | null | undefined): string {
  // null is left out, as Python's None.
  if (key === undefined || key === null) return randomUUID();
  if (typeof key !== "string" || !/^[!-~]{1,128}$/.test(key)) {
    throw new InvalidError(400, "bad_request", `idempotencyKey ${JSON.stringify(key)}: want 1-128 printable ASCII characters, no spaces`);
  }
  return key;
}

/** A client for one cairn workspace served over HTTP. */
export class CairnClient {
  /** The server's URL, without a trailing slash. */
  readonly url: string;
  private readonly token: string | undefined;
  private readonly timeout: number;
  private readonly fetch: typeof fetch | undefined;
  private readonly agent: http.Agent | undefined;
  /**
   * How often a commit or reply whose answer was lost is sent again, with
   * its idempotency key, once the server has shown it honours keys (see
   * {@link CommitOptions.idempotencyKey}).
   */
  commitRetries = 2;
  private keysHonoured = false;
  private isClosed = false;
  /** The fetch calls under way, which close() cuts off (node:http's go with the agent's sockets). */
  private readonly fetching = new Set<AbortController>();

  constructor(opts: ClientOptions = {}) {
    opts = options(opts);
    // "" is no URL, not $CAIRN_URL's (an unset variable?), as store "" is no store.
    if (opts.url === "") throw new Error(`url: want the server's URL, not "" (leave url out for $CAIRN_URL)`);
    const url = opts.url ?? process.env.CAIRN_URL;
    if (!url) throw new Error("no server URL: pass url or set CAIRN_URL");
    if (typeof url !== "string") throw new TypeError(`url: want the server's URL (a string, such as "http://127.0.0.1:7474"), not ${shown(url)}`);
    this.url = url.replace(/\/+$/, "");
    // Checked up front: node:http refuses a header with a newline as the
    // request goes out, which said the server was unreachable.
    this.token = headerSafe(opts.token ?? process.env.CAIRN_TOKEN ?? undefined);
    // Only undefined is the default: null is no number of seconds, as in Python.
    this.timeout = opts.timeout === undefined ? 90 : opts.timeout;
    if (typeof this.timeout !== "number" || !(this.timeout > 0 && this.timeout < Infinity)) {
      throw new Error(`timeout ${String(opts.timeout)}: want seconds > 0 (the default is 90)`);
    }
    // null is the default, as undefined is.
    this.fetch = opts.fetch ?? undefined;
    if (this.fetch !== undefined && typeof this.fetch !== "function") {
      // Each call said the server could not be reached: "this.fetch is not a function".
      throw new TypeError(`fetch: want a function (such as globalThis.fetch), not ${shown(this.fetch)}`);
    }
    if (!this.fetch) {
      const proto = URL.canParse(this.url) ? new URL(this.url).protocol : "";
      if (proto !== "http:" && proto !== "https:") throw new Error(`server URL ${JSON.stringify(url)}: want http://HOST:PORT or https://HOST:PORT`);
      // Idle connections close well before the server's idle timeout (2
      // minutes), so a request never goes out on one the server is closing.
      const agentOpts: http.AgentOptions = { keepAlive: true, timeout: idleMs };
      this.agent = proto === "https:" ? new https.Agent(agentOpts) : new http.Agent(agentOpts);
    }
  }

  /** True once {@link CairnClient.close} was called (also by the close() of the server startServer() started). */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Close the client: its kept-alive connections are closed, and each
   * later call rejects at once, without a request, with InvalidError
   * (status 0, code "closed"). The close() of a server that startServer()
   * started closes its client. Closing twice is no error.
   */
  close(): void {
    this.isClosed = true;
    for (const c of this.fetching) c.abort();
    this.agent?.destroy();
  }

  /**
   * closedError is the error of a call on a closed client: made after
   * close() (nothing was sent), or cut off by it (method: the call's; a
   * write may have taken effect).
   */
  private closedError(method?: string): InvalidError {
    const how = "(close() was called on it, or on the server startServer() started)";
    if (method === undefined) return new InvalidError(0, "closed", `the client of ${this.url} is closed ${how}: nothing was sent; make another to go on`);
    const effect = method === "GET" || method === "HEAD" ? "" : "; the request may have taken effect: read the session's head before trying again";
    return new InvalidError(0, "closed", `the client of ${this.url} was closed while the call was under way ${how}${effect}`);
  }

  private async call<T>(
    method: string,
    path: string,
    opts: {
      body?: Record<string, unknown>;
      query?: Record<string, string | number | undefined>;
      timeout?: number;
      signal?: AbortSignal | null;
      headers?: Record<string, string>;
    } = {},
  ): Promise<{ status: number; body: T }> {
    if (this.isClosed) {
      // Not sent: a private server closed with it would answer "connection
      // refused", as if cairn serve had failed.
      throw this.closedError();
    }
    let url = this.url + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined) q.set(k, String(v));
      const qs = q.toString();
      if (qs) url += "?" + qs;
    }
    const headers: Record<string, string> = { Accept: "application/json", ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = encode(opts.body);
      headers["Content-Type"] = "application/json";
    }
    if (this.token) headers.Authorization = "Bearer " + this.token;
    // Whole milliseconds: fetch's AbortSignal.timeout refuses others; and
    // at most what a timer holds (24.8 days), past which Node fires it at once.
    const timeoutMs = Math.min(Math.ceil((opts.timeout ?? this.timeout) * 1000), maxTimerMs);
    const signal = opts.signal ?? undefined;
    signal?.throwIfAborted();
    let res: { ok: boolean; status: number; statusText: string; text: string };
    // The fetch's own signal: aborted past timeoutMs (a TimeoutError, as
    // node:http's), or by close(), which cuts off a fetch under way as it
    // closes node:http's sockets.
    const own = this.fetch ? new AbortController() : undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (own) {
      this.fetching.add(own);
      timer = setTimeout(() => {
        const e = new Error(`${method} ${url}: no answer within ${timeoutMs / 1000} s`);
        e.name = "TimeoutError";
        own.abort(e);
      }, timeoutMs);
    }
    try {
      if (this.fetch) {
        // A redirect is an answer, not followed (node:http follows none): fetch
        // would turn a commit's POST into a GET of the new URL.
        const r = await this.fetch(url, { method, headers, body, redirect: "manual", signal: signal ? either(signal, own!.signal) : own!.signal });
        res = { ok: r.ok, status: r.status, statusText: r.statusText, text: await r.text() };
      } else {
        res = await send(this.agent!, url, method, headers, body, timeoutMs, signal);
      }
    } catch (e) {
      // Cancelled by the caller: the caller's reason, not an unreachable server.
      signal?.throwIfAborted();
      // Cut off by close(): said so, not "the server closed the connection".
      if (this.isClosed) throw this.closedError(method);
      // A private server (startServer()'s) that exited is said so.
      // Asked only when it may have died (a connection refused or cut off):
      // the question may wait a moment for its exit.
      const err = (typeof e === "object" && e !== null ? e : {}) as { code?: unknown; cause?: { code?: unknown } };
      const code = err.code ?? err.cause?.code;
      const dying = typeof code === "string" && ["ECONNREFUSED", "ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET"].includes(code);
      throw unreachable(this.url, method, timeoutMs, e, dying ? await serverGone.get(this)?.() : undefined);
    } finally {
      clearTimeout(timer);
      if (own) this.fetching.delete(own);
    }
    const text = res.text;
    if (!res.ok) {
      let err: { code?: unknown; error?: unknown; head?: unknown } | undefined;
      try {
        err = JSON.parse(text);
      } catch {
        err = undefined;
      }
      if (typeof err !== "object" || err === null || typeof err.code !== "string") {
        // Not cairn's {"code", "error"}: Go's plain text for what it
        // refuses before any handler (a header too large, say), or another
        // server's page at this URL.
        let msg = text.trim();
        if (!msg || msg.length > 200 || msg.includes("<") || msg.includes("\n")) msg = this.foreign(res.status, res.statusText);
        throw errorFor(res.status, "http", msg);
      }
      throw errorFor(res.status, err.code, typeof err.error === "string" ? err.error : res.statusText, typeof err.head === "number" ? err.head : undefined);
    }
    if (!text) return { status: res.status, body: undefined as T };
    let parsed: T;
    try {
      parsed = JSON.parse(text) as T;
    } catch {
      throw new CairnError(res.status, "http", this.foreign(res.status, res.statusText));
    }
    refuseInexactIntegers(text);
    return { status: res.status, body: parsed };
  }

  /** The message for an answer that is not cairn's. */
  private foreign(status: number, statusText: string): string {
    return `${status} ${statusText} from ${this.url}, without cairn's JSON in its body: is that the URL of cairn serve?`;
  }

  private static s(session: string): string {
    name(session, "session");
    // A URL resolves "." and ".." (escaped or not) as dot segments, and
    // an empty segment is no name: the request would reach another route,
    // not the server's 400 for the name.
    // A name past 128 characters is said here too: one past the server's
    // 64 KiB of headers would be its plain "431 Request Header Fields Too Large".
    if (session === "" || session === "." || session === ".." || session.length > 128) {
      const shown = session.length <= 128 ? JSON.stringify(session) : `${JSON.stringify(session.slice(0, 32)).slice(0, -1)}…" (${session.length} characters)`;
      throw new InvalidError(400, "bad_request", `session ${shown}: want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'`);
    }
    try {
      return encodeURIComponent(session);
    } catch {
      // URIError: half a surrogate pair, which UTF-8 cannot carry.
      throw new InvalidError(400, "bad_request", `session ${JSON.stringify(session)}: want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'`);
    }
  }

  /**
   * All sessions with their heads; with a prefix, only those whose name
   * starts with it. Sessions the store holds damaged are left out with an
   * {@link UnreadableSessionsWarning}.
   */
  async sessions(prefix?: string | null, opts: CallOptions = {}): Promise<SessionInfo[]> {
    opts = options(opts);
    // 5 went out as the prefix "5", and 0 listed every session. null is
    // every session, as undefined and Python's None are.
    if (prefix !== undefined && prefix !== null && typeof prefix !== "string") throw new TypeError(`prefix: want the start of session names (a string), not ${shown(prefix)}`);
    if (typeof prefix === "string" && prefix.length > 128) {
      // In the server's words: one past its 64 KiB of headers was its plain
      // "431 Request Header Fields Too Large".
      throw new InvalidError(400, "bad_request", `prefix: ${long(prefix)} is not the start of a session name: ${nameRule}`);
    }
    const r = await this.call<components["schemas"]["SessionList"]>("GET", "/v1/sessions", {
      query: { prefix: prefix || undefined },
      signal: opts.signal,
    });
    listed(r.body.unreadable);
    return r.body.sessions;
  }

  /** Sessions whose head awaits a human; damaged ones are left out with an {@link UnreadableSessionsWarning}. */
  async inbox(opts: CallOptions = {}): Promise<Pending[]> {
    opts = options(opts);
    const r = await this.call<components["schemas"]["Inbox"]>("GET", "/v1/inbox", { signal: opts.signal });
    listed(r.body.unreadable);
    return r.body.pending;
  }

  /** The session's head with its state (unless state is false), or undefined if it has no steps. */
  async head(session: string, opts: { state?: boolean } & CallOptions = {}): Promise<Step | undefined> {
    opts = options(opts);
    flag(opts.state, "state");
    try {
      const r = await this.call<Step>("GET", `/v1/sessions/${CairnClient.s(session)}/head`, {
        query: { state: opts.state === false ? "false" : undefined },
        signal: opts.signal,
      });
      return r.body;
    } catch (e) {
      // Only cairn's own 404 says the session has no steps; another server's says nothing.
      if (e instanceof NotFoundError && e.code === "not_found") return undefined;
      throw e;
    }
  }

  /** Step n of the session, with its state unless state is false. */
  async step(session: string, n: number, opts: { state?: boolean } & CallOptions = {}): Promise<Step> {
    opts = options(opts);
    flag(opts.state, "state");
    const r = await this.call<Step>("GET", `/v1/sessions/${CairnClient.s(session)}/steps/${whole(n, "step")}`, {
      query: { state: opts.state === false ? "false" : undefined },
      signal: opts.signal,
    });
    return r.body;
  }

  /** Commit state (any JSON value) as the session's next step. */
  async commit(session: string, state: unknown, opts: CommitOptions = {}): Promise<Step> {
    opts = options(opts);
    const body: CommitRequest = { state, status: opts.status ?? "running" };
    if (opts.record !== undefined) body.record = opts.record;
    // null is no fence, as undefined and Python's None are.
    if (opts.expect !== undefined && opts.expect !== null) body.expect = whole(opts.expect, "expect");
    return this.post(session, body, opts);
  }

  /** post sends a commit with its Idempotency-Key, again while its answer is lost (see CommitOptions.idempotencyKey). */
  private async post(session: string, body: CommitRequest, opts: CommitOptions): Promise<Step> {
    return this.postKeyed(`/v1/sessions/${CairnClient.s(session)}/steps`, body, opts, "commit");
  }

  /**
   * postKeyed sends a step (`what`: a commit or a reply) with its
   * Idempotency-Key, again while its answer is lost, once the server has
   * shown it honours keys (see CommitOptions.idempotencyKey).
   */
  private async postKeyed(
    path: string,
    body: Record<string, unknown>,
    opts: { idempotencyKey?: string | null } & CallOptions,
    what: "commit" | "reply",
  ): Promise<Step> {
    const key = idempotencyKey(opts.idempotencyKey);
    const retries = this.commitRetries;
    if (typeof retries !== "number" || !Number.isInteger(retries) || retries < 0) {
      // Checked before sending: null, -1 or "2" were taken for no retries (or for 2), without a word.
      throw new InvalidError(400, "bad_request", `commitRetries: want a whole number >= 0, not ${typeof retries === "string" ? JSON.stringify(retries) : shown(retries)}`);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const st = (await this.call<Step>("POST", path, { body, signal: opts.signal, headers: { "Idempotency-Key": key } })).body;
        if (st.idempotency_key === key) this.keysHonoured = true;
        return st;
      } catch (e) {
        if (!(e instanceof UnavailableError) || !e.sent) throw e;
        if (this.keysHonoured && attempt < retries) {
          await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
          continue;
        }
        let err = e;
        if (e.code === "unreachable") {
          // Instead of "read the session's head before trying again".
          const msg = e.message.replace(/^cairn: 0 unreachable: /, "").replace(/; [^;]*$/, "");
          err = new UnavailableError(e.status, e.code, `${msg}; the ${what} may have taken effect: retry it with idempotencyKey ${JSON.stringify(key)}, which answers with its step if it landed and never writes a second one`);
        }
        err.idempotencyKey = key;
        throw err;
      }
    }
  }

  /**
   * Commit the head's state with a JSON Patch applied as the session's
   * next step: the server stores exactly what committing the whole patched
   * state would, and the request carries only the change. With expect,
   * the patch applies to that step's state or fails with ConflictError; a
   * patch that does not apply fails with InvalidError and commits nothing.
   */
  async patch(session: string, ops: PatchOp[], opts: CommitOptions = {}): Promise<Step> {
    opts = options(opts);
    // undefined went out as no patch, which the server called a missing state.
    if (!Array.isArray(ops)) throw new TypeError(`ops: want an array of JSON Patch operations (makePatch makes one), not ${shown(ops)}`);
    const body: CommitRequest = { patch: ops as unknown as CommitRequest["patch"], status: opts.status ?? "running" };
    if (opts.record !== undefined) body.record = opts.record;
    // null is no fence, as undefined and Python's None are.
    if (opts.expect !== undefined && opts.expect !== null) body.expect = whole(opts.expect, "expect");
    return this.post(session, body, opts);
  }

  /**
   * Commit state as a step that awaits a human, with record {question, ...extra}.
   * The question is any JSON value but null (undefined and null are InvalidError).
   */
  async ask(
    session: string,
    state: unknown,
    question: unknown,
    opts: { expect?: number | null; record?: Record<string, unknown> | null; idempotencyKey?: string | null } & CallOptions = {},
  ): Promise<Step> {
    opts = options(opts);
    // null is no other members, as undefined is.
    if (opts.record !== undefined && opts.record !== null && !plain(opts.record)) {
      // A string or an array was spread into the record: "note" as {"0": "n", ...}.
      throw new TypeError(`record: want an object of the record's other members, not ${shown(opts.record)}`);
    }
    if (opts.record && Object.hasOwn(opts.record, "question")) {
      // It was replaced by the question without a word (Python's ask refuses question= twice).
      throw new TypeError(`record: it holds "question", which ask sets to the question: leave it out of the record`);
    }
    if (question === undefined || question === null) {
      // A step awaiting the answer to no question, in the inbox with nothing to show.
      throw new InvalidError(400, "bad_request", `question: want a question (any JSON value but null), not ${question}`);
    }
    return this.commit(session, state, {
      record: { ...opts.record, question },
      status: "awaiting_input",
      expect: opts.expect,
      signal: opts.signal,
      idempotencyKey: opts.idempotencyKey,
    });
  }

  /**
   * Long-poll: the head once it is past step `after`, or undefined after
   * timeout seconds (default 30). The server holds one poll for at most a
   * minute; a longer timeout polls again until it passes.
   */
  async wait(session: string, after: number, opts: { timeout?: number; state?: boolean } & CallOptions = {}): Promise<Step | undefined> {
    opts = options(opts);
    // Only undefined is the default: null (no timeout?) is refused, as Python refuses None.
    const timeout = opts.timeout === undefined ? 30 : opts.timeout;
    flag(opts.state, "state");
    if (typeof timeout !== "number" || !(timeout >= 0)) {
      throw new InvalidError(400, "bad_request", `timeout: want seconds >= 0, not ${typeof timeout === "string" ? JSON.stringify(timeout) : String(timeout)}`);
    }
    const path = `/v1/sessions/${CairnClient.s(session)}/wait`;
    after = whole(after, "after");
    // On a monotonic clock: a wall clock set back meanwhile would make
    // the wait outlast its timeout.
    const deadline = performance.now() + timeout * 1000;
    for (;;) {
      const left = Math.max(0, Math.min((deadline - performance.now()) / 1000, maxWait));
      const r = await this.call<Step>("GET", path, {
        query: { after, timeout: Math.round(left * 1000) / 1000, state: opts.state === false ? "false" : undefined },
        timeout: left + this.timeout,
        signal: opts.signal,
      });
      if (r.status === 200) return r.body;
      if (performance.now() >= deadline) return undefined;
    }
  }

  /**
   * Answer the question at the session's head; the answer becomes its next step. With
   * `opts.expect` (the question's step, as the inbox showed it) a question asked there since
   * instead is a ConflictError, not answered. `opts.idempotencyKey` names this reply as
   * {@link CommitOptions.idempotencyKey} names a commit: sent again with the same key, a reply
   * that already landed is answered with its step (`replayed` true), not refused as answered;
   * the key on another step is a ConflictError. Default: a fresh key for this call; a reply
   * whose answer is lost is sent again with it as a commit is.
   */
  async reply(session: string, input: unknown, opts: { expect?: number | null; idempotencyKey?: string | null } & CallOptions = {}): Promise<Step> {
    opts = options(opts);
    if (input === undefined) {
      // Sent as no input at all, which the server called missing: undefined has no JSON form.
      throw new TypeError("input: want the human's answer (any JSON value; null for none), not undefined, which JSON has no form for");
    }
    // null is no fence, as undefined and Python's None are.
    const body = opts.expect === undefined || opts.expect === null ? { input } : { input, expect: whole(opts.expect, "expect") };
    return this.postKeyed(`/v1/sessions/${CairnClient.s(session)}/reply`, body, opts, "reply");
  }

  /** Steps newest first (without states), following parents across forks. */
  async log(session: string, opts: { limit?: number | null; from?: number | null } & CallOptions = {}): Promise<Step[]> {
    opts = options(opts);
    const r = await this.call<components["schemas"]["Log"]>("GET", `/v1/sessions/${CairnClient.s(session)}/log`, {
      query: {
        // null is left out, as undefined and Python's None are.
        limit: opts.limit === undefined || opts.limit === null ? undefined : whole(opts.limit, "limit"),
        from: opts.from === undefined || opts.from === null ? undefined : whole(opts.from, "from"),
      },
      signal: opts.signal,
    });
    return r.body.steps;
  }

  /**
   * Every step, newest first, following parents across forks, read `page`
   * steps (default 1000) a request: a long history is never held whole.
   * Each next page starts below the last step read, in the history of
   * `session`: below a fork's first step, step N of the fork is the step
   * at N in its history (the origin's), also once the origin was removed.
   */
  async *logAll(session: string, opts: { page?: number; from?: number | null } & CallOptions = {}): AsyncGenerator<Step, void, undefined> {
    opts = options(opts);
    let page = opts.page === undefined ? 1000 : whole(opts.page, "page");
    // Said in the caller's word, not as the server's "limit"; a page past
    // the server's most steps a request is read as pages of that many.
    if (page < 1) throw new InvalidError(400, "bad_request", `page: want 1 or more steps a request, not ${page}`);
    page = Math.min(page, maxLogPage);
    let from = opts.from;
    for (;;) {
      const steps = await this.log(session, { limit: page, from, signal: opts.signal });
      for (const st of steps) {
        // Closed meanwhile: no more steps, not even the rest of a page read before.
        if (this.isClosed) throw this.closedError();
        yield st;
      }
      const last = steps[steps.length - 1];
      // The history ends at step 1, at a step whose older history was
      // pruned (truncated), or at a first step (no parent) above 1, as of a
      // name committed to again after its removal.
      if (steps.length < page || last.step <= 1 || last.truncated || last.parent === null) return;
      from = last.step - 1;
    }
  }

  /** Start session `to` from a step of `session` (default its head); no data is copied. */
  async fork(session: string, to: string, opts: { step?: number | null } & CallOptions = {}): Promise<Step> {
    opts = options(opts);
    const body: components["schemas"]["ForkRequest"] = { to: name(to, "to") };
    // null is the head, as undefined and Python's None are.
    if (opts.step !== undefined && opts.step !== null) body.step = whole(opts.step, "step");
    return (await this.call<Step>("POST", `/v1/sessions/${CairnClient.s(session)}/fork`, { body, signal: opts.signal })).body;
  }

  /** Changes from step a to step b, each "SESSION" (its head) or "SESSION@N". */
  async diff(a: string, b: string, opts: CallOptions = {}): Promise<Change[]> {
    opts = options(opts);
    for (const [v, what] of [[a, "a"], [b, "b"]] as const) {
      // 1 went out as "1", a session's name.
      if (typeof v !== "string") throw new TypeError(`${what}: want a step ("SESSION" or "SESSION@N", a string), not ${shown(v)}`);
      shortRef(v, what);
    }
    return (await this.call<components["schemas"]["Diff"]>("GET", "/v1/diff", { query: { a, b }, signal: opts.signal })).body.changes;
  }

  /** Remove a session, as `cairn rm`: its steps leave its history; forks keep what they share. */
  async remove(session: string, opts: CallOptions = {}): Promise<Removed> {
    opts = options(opts);
    return (await this.call<Removed>("DELETE", `/v1/sessions/${CairnClient.s(session)}`, { signal: opts.signal })).body;
  }
}

/** The longest delay a Node timer takes (2^31-1 ms, 24.8 days). */
const maxTimerMs = 2 ** 31 - 1;

/** How long an idle kept-alive connection stays open. */
const idleMs = 30_000;

/** The most steps `cairn serve` reads in one log request (its limit's bound). */
const maxLogPage = 10_000;

/** The longest long-poll `cairn serve` holds (seconds); wait polls again until its own timeout. */
const maxWait = 60;

/**
 * whole returns n if it is a whole number, else throws InvalidError: a
 * step number is never rounded, and NaN never goes out as JSON's null
 * (an expect of null is no expect: the commit would land unfenced).
 */
function whole(n: unknown, what: string): number {
  if (typeof n !== "number" || !Number.isInteger(n)) {
    throw new InvalidError(400, "bad_request", `${what}: want a whole number, not ${typeof n === "string" ? JSON.stringify(n) : String(n)}`);
  }
  if (!Number.isSafeInteger(n)) {
    // Past 2^53 a number is no longer every whole number: 2**60 would go
    // out as 1152921504606847000, another step than the one meant.
    throw new InvalidError(400, "bad_request", `${what}: want a whole number from -(2^53-1) to 2^53-1, which a JavaScript number holds exactly, not ${BigInt(n)}`);
  }
  return n;
}

/**
 * options returns a call's options, {} if undefined, or throws a TypeError
 * if they are no plain object: null (or 5) was read as no options, or
 * failed with Node's own words.
 */
function options<T extends object>(o: T | undefined): T {
  if (o === undefined) return {} as T;
  if (!plain(o)) throw new TypeError(`options: want an object of options, not ${shown(o)}`);
  const signal = (o as CallOptions).signal;
  // "signal.throwIfAborted is not a function", or (a plain object) never heeded.
  // What the calls use of one, so that a signal of another realm passes.
  const usable = (s: unknown) => typeof s === "object" && s !== null && ["throwIfAborted", "addEventListener", "removeEventListener"].every((m) => typeof (s as Record<string, unknown>)[m] === "function");
  // null is no signal, as fetch takes it.
  if (signal === null) return { ...o, signal: undefined };
  if (signal !== undefined && !usable(signal)) throw new TypeError(`signal: want an AbortSignal (such as AbortSignal.timeout(ms)), not ${shown(signal)}`);
  return o;
}

/** What a session's name may hold, in the server's words. */
const nameRule = "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'";

/** long shows a long string as the server does: its start, and its length. */
function long(s: string): string {
  return `${JSON.stringify(s.slice(0, 32)).slice(0, -1)}…" (${s.length} characters)`;
}

/**
 * shortRef throws InvalidError, in the server's words, if ref (a step
 * reference, "S" or "S@N") is longer than any: one past the server's
 * 64 KiB of headers was its plain "431 Request Header Fields Too Large".
 */
function shortRef(ref: string, what: string): void {
  const at = ref.indexOf("@");
  const name = at < 0 ? ref : ref.slice(0, at);
  const num = at < 0 ? "" : ref.slice(at + 1);
  if (name.length > 128) throw new InvalidError(400, "bad_request", `${what}: session ${long(name)}: ${nameRule}`);
  if (num.replace(/^0+/, "").length > 20) {
    throw new InvalidError(400, "bad_request", `${what}: bad step reference ${long(ref)}: step number too large (at most 18446744073709551615)`);
  }
}

/** name returns n, or throws a TypeError if it is no string: a session's name is never made of another value. */
function name(n: unknown, what: string): string {
  if (typeof n !== "string") throw new TypeError(`${what}: want a session's name (a string), not ${shown(n)}`);
  return n;
}

/** flag throws a TypeError unless v is true, false or undefined (the default): "false" is never taken for false. */
function flag(v: unknown, what: string): void {
  if (v !== undefined && typeof v !== "boolean") throw new TypeError(`${what}: want true or false, not ${typeof v === "string" ? JSON.stringify(v) : shown(v)}`);
}

/** either is a signal that aborts when a or b does (AbortSignal.any, which Node has only since 20.3). */
function either(a: AbortSignal, b: AbortSignal): AbortSignal {
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const c = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) {
      c.abort(s.reason);
      break;
    }
    s.addEventListener("abort", () => c.abort(s.reason), { once: true, signal: c.signal });
  }
  return c.signal;
}

/**
 * headerSafe returns token, or throws InvalidError if an Authorization
 * header cannot carry it: a control character (a newline read with it from
 * a file) makes node:http refuse the request as it goes out, and one past
 * U+007E would go out as Latin-1, never the server's UTF-8 token. As the
 * Python client says.
 */
function headerSafe(token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  if (typeof token !== "string") throw new TypeError(`token: want a string, not ${typeof token}`);
  const bad = /[^\t\x20-\x7e]/.exec(token);
  if (bad) {
    const c = bad[0].codePointAt(0)!;
    const hint = c === 10 || c === 13 ? " (a newline read with it from a file?)" : "";
    throw new InvalidError(400, "bad_request", `token: it holds U+${c.toString(16).toUpperCase().padStart(4, "0")}, a character an HTTP header cannot carry: want printable ASCII${hint}`);
  }
  return token;
}

/**
 * The fewest digits an integer past 2^53 (9007199254740992) is written
 * with; or an exponent of three digits, as a number past the largest
 * double (1e400) is.
 */
const longDigits = /\d{16}|[eE][+]?\d{3}/;

/**
 * refuseInexactIntegers throws LimitError if the JSON text holds an
 * integer that JSON.parse reads as another number (12345678901234567890
 * as 12345678901234567000), as a state another client committed may: a
 * number silently changed is worse than none. Integers past 2^53 that a
 * double holds exactly (1152921504606846976, 1e20) read as they are, and so
 * does a double's own text, as JSON.stringify writes it (2**60 as
 * 1152921504606847000, which is not 2^60 but no double is nearer). A
 * number past the largest double (1e400), which JSON.parse reads as
 * Infinity, is refused too. Only a text with 16 digits in a row, or an
 * exponent of three digits, is scanned.
 */
function refuseInexactIntegers(text: string): void {
  if (!longDigits.test(text)) return;
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Past the string: the next quote not escaped (after an even run of backslashes).
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return;
        let b = i - 1;
        while (text.charCodeAt(b) === 92 /* \ */) b--;
        if ((i - 1 - b) % 2 === 0) break;
      }
      i++;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i;
      let integer = true;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d >= 48 && d <= 57) continue;
        if (d === 46 || d === 101 || d === 69 || d === 43 || d === 45) integer = false;
        else break;
      }
      if (integer && i - start >= 16) {
        const t = text.slice(start, i);
        const read = Number(t);
        // A double's own text (JSON.stringify(2**60) is 1152921504606847000)
        // reads as the number written: a state this client committed reads back.
        // One past the largest double reads as Infinity, which BigInt refuses.
        if (!Number.isFinite(read) || (String(read) !== t && BigInt(t) !== BigInt(read))) {
          throw new LimitError(422, "limit", `the answer holds the integer ${t}, which a JavaScript number cannot hold exactly (JSON.parse would read it as ${read}): read it with a client that keeps such integers (the Python client does), or store them as strings`);
        }
      } else if (!integer) {
        const t = text.slice(start, i);
        const read = Number(t);
        if (!Number.isFinite(read)) {
          const shown = t.length <= 40 ? t : t.slice(0, 40) + "...";
          throw new LimitError(422, "limit", `the answer holds the number ${shown}, which a JavaScript number cannot hold (JSON.parse would read it as ${read}): store such numbers as strings`);
        }
      }
    } else {
      i++;
    }
  }
}

/**
 * send makes one request through node:http or node:https and reads the
 * whole answer; past timeoutMs it aborts with a TimeoutError, as fetch
 * with AbortSignal.timeout does.
 */
function send(
  agent: http.Agent,
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ ok: boolean; status: number; statusText: string; text: string }> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string | number> = { ...headers };
    if (body !== undefined) h["Content-Length"] = Buffer.byteLength(body);
    const mod = url.startsWith("https:") ? https : http;
    const req = mod.request(url, { method, headers: h, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", fail);
      res.on("end", () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", abort);
        const status = res.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, statusText: res.statusMessage ?? "", text: Buffer.concat(chunks).toString("utf8") });
      });
    });
    const timer = setTimeout(() => {
      const e = new Error(`${method} ${url}: no answer within ${timeoutMs / 1000} s`);
      e.name = "TimeoutError";
      req.destroy(e);
    }, timeoutMs);
    const abort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error("cancelled"));
    // One signal may cancel many calls at once, each listening until it
    // ends: past Node's default of 10 listeners it would warn of a leak
    // that is none. fetch raises the bound as well.
    if (signal && getMaxListeners(signal) === defaultMaxListeners) setMaxListeners(1500, signal);
    signal?.addEventListener("abort", abort, { once: true });
    function fail(e: Error): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
      reject(e);
    }
    req.on("error", fail);
    req.end(body);
  });
}

/** Node's codes for a server certificate it could not verify. */
const certErrors = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * The error for a request that got no answer from the server: what
 * happened, in words, and whether a request that writes may have taken
 * effect (it may, unless it was never sent).
 */
function unreachable(server: string, method: string, timeoutMs: number, e: unknown, gone?: string): UnavailableError {
  // A fetch the caller gave may reject with anything: null or undefined
  // failed here with "Cannot read properties of undefined (reading 'code')".
  const err = (typeof e === "object" && e !== null ? e : { message: `the fetch rejected with ${String(e)}` }) as {
    code?: unknown;
    name?: string;
    message?: string;
    cause?: { code?: unknown };
  };
  // Node's codes are strings; a DOMException's (fetch's TimeoutError) is a number.
  const code = [err.code, err.cause?.code].find((c): c is string => typeof c === "string");
  let what: string;
  let neverSent = false;
  if (code === "ECONNREFUSED") {
    what = "connection refused: is cairn serve running, and is the port in the URL right?";
    neverSent = true;
  } else if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    what = "no such host: check the host in the URL";
    neverSent = true;
  } else if (code !== undefined && certErrors.has(code)) {
    // A TLS handshake that failed sent no request.
    what = `the server's certificate could not be verified (${code})`;
    neverSent = true;
  } else if (code === "EPROTO" || code?.startsWith("ERR_SSL_")) {
    what = "the TLS handshake failed: does the server speak https? (cairn serve speaks http://)";
    neverSent = true;
  } else if (err.name === "TimeoutError") {
    what = `no answer within ${timeoutMs / 1000} s`;
  } else if (code === "ECONNRESET" || code === "EPIPE" || code === "ECONNABORTED" || code === "UND_ERR_SOCKET") {
    what = "the server closed the connection before it answered (did it stop or restart?)";
  } else {
    what = code ?? err.message ?? String(e);
  }
  // "is the port in the URL right?" asked about a port the caller never chose.
  if (gone) what = gone;
  let msg = `could not reach the cairn server at ${server}: ${what}`;
  if (method !== "GET" && method !== "HEAD") {
    msg += neverSent ? "; nothing was sent" : "; the request may have taken effect: read the session's head before trying again";
  }
  const out = new UnavailableError(0, "unreachable", msg);
  out.sent = !neverSent;
  return out;
}

/** True if a step record is a human's reply ({reply, in_reply_to}). */
export function isReply(record: unknown): record is { reply: unknown; in_reply_to: number } {
  return typeof record === "object" && record !== null && "reply" in record && "in_reply_to" in record;
}
