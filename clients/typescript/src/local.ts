/**
 * A private `cairn serve` for one program: started on a free loopback
 * port with a fresh random token, stopped by {@link LocalServer.close}, or
 * else when the program exits, however it exits. It does not keep the
 * program running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { plain, shown } from "./encode.js";
import { CairnClient } from "./index.js";
import { serverGone } from "./internal.js";

/** Options of {@link startServer}. */
export interface LocalOptions {
  /** The store URL (default, also for null: $CAIRN_STORE, else cairn's local default). */
  store?: string | null;
  /** The cairn binary (default, also for null: $CAIRN_BIN, else `cairn` on PATH). */
  bin?: string | null;
  /** More environment for the server (for example S3 credentials): names to strings (default, also for null: none). */
  env?: Record<string, string> | null;
  /** Seconds to wait for the server to listen (default 30). */
  startTimeout?: number;
  /** Seconds a request of its client may take (default 90), as CairnClient's timeout and Python's open(timeout=). */
  timeout?: number;
}

/** A running private server and a client for it. */
export interface LocalServer {
  /** Its URL, http://127.0.0.1:PORT. */
  url: string;
  /** Its bearer token. */
  token: string;
  /** A client for it. */
  client: CairnClient;
  /**
   * Close the client (a later call on it rejects at once with InvalidError,
   * code "closed", sending nothing), then stop the server and wait for it
   * to exit.
   */
  close(): Promise<void>;
}

/** Start `cairn serve` on a free loopback port with a fresh token. */
export async function startServer(opts: LocalOptions = {}): Promise<LocalServer> {
  if (opts === null || typeof opts !== "object") throw new TypeError(`options: want an object of options, not ${shown(opts)}`);
  // Checked before a server starts: a store of 5 served the directory "5",
  // and a start timeout of 0 (or -1, or NaN) started a server to kill it.
  for (const [v, what] of [[opts.store, "store: want a store URL or directory"], [opts.bin, "bin: want the path of the cairn binary"]] as const) {
    // null is the default, as undefined and Python's None are.
    if (v !== undefined && v !== null && typeof v !== "string") throw new TypeError(`${what} (a string), not ${shown(v)}`);
  }
  if (opts.env !== undefined && opts.env !== null) {
    // "abc" was spread into the environment as 0=a 1=b 2=c, and 5 as nothing.
    if (!plain(opts.env)) throw new TypeError(`env: want an object of environment variables (names to strings), not ${shown(opts.env)}`);
    for (const [k, v] of Object.entries(opts.env)) {
      // 5 went out as "5", and null as "null"; undefined is left out, as Node leaves it.
      if (v !== undefined && typeof v !== "string") throw new TypeError(`env: ${JSON.stringify(k)}: want a string, not ${shown(v)}`);
    }
  }
  if (opts.store === "") {
    // Taken for no store: the server served $CAIRN_STORE or cairn's default, another store than the caller's.
    throw new Error(`store: want a store URL or directory, not "" (leave store out for $CAIRN_STORE or cairn's default)`);
  }
  if (opts.startTimeout !== undefined && (typeof opts.startTimeout !== "number" || !(opts.startTimeout > 0 && opts.startTimeout < Infinity))) {
    throw new Error(`startTimeout ${typeof opts.startTimeout === "string" ? JSON.stringify(opts.startTimeout) : shown(opts.startTimeout)}: want seconds > 0 (the default is 30)`);
  }
  if (opts.timeout !== undefined && (typeof opts.timeout !== "number" || !(opts.timeout > 0 && opts.timeout < Infinity))) {
    // Checked before a server starts, as CairnClient would check it after.
    throw new Error(`timeout ${typeof opts.timeout === "string" ? JSON.stringify(opts.timeout) : shown(opts.timeout)}: want seconds > 0 (the default is 90)`);
  }
  const bin = opts.bin ?? process.env.CAIRN_BIN ?? "cairn";
  const token = randomBytes(24).toString("hex");
  const args: string[] = [];
  const store = opts.store ?? process.env.CAIRN_STORE;
  if (store) args.push("--store", store);
  args.push("serve", "--listen", "127.0.0.1:0");
  const env = { ...process.env, ...opts.env, CAIRN_TOKEN: token };
  const timeoutMs = (opts.startTimeout ?? 30) * 1000;
  let started: Started;
  try {
    // The server stops when its stdin ends: when this program exits, even
    // killed by a signal that runs no exit handler, the pipe's end closes.
    started = await launch(bin, [...args, stopOnEOF], env, timeoutMs);
  } catch (e) {
    if (!(e instanceof Refused) || !e.refuses(stopOnEOF)) throw e;
    // A cairn older than the flag: it stops on close() and at this
    // program's exit (the "exit" handler below), not when the program is
    // killed by a signal.
    started = await launch(bin, args, env, timeoutMs);
  }
  const { child, exited, url } = started;
  // The server's later output goes nowhere; keep the pipes drained.
  child.stdout?.resume();
  child.stderr?.resume();
  // The server does not keep the program alive, and stops when it exits
  // (at its end, on process.exit or an uncaught exception), close()d or
  // not, as the Python client's does: no one else knows its token, so it
  // would serve no one, holding its port and store open for ever.
  running.add(child);
  if (running.size === 1) process.on("exit", stopAll);
  held(child, false);
  const client = new CairnClient({ url, token, timeout: opts.timeout });
  serverGone.set(client, () => exitWords(child, exited));
  return {
    url,
    token,
    client,
    async close() {
      client.close();
      if (running.delete(child) && running.size === 0) process.removeListener("exit", stopAll);
      // Wait for the exit with the child held again, so that the program
      // does not end first.
      held(child, true);
      stop(child);
      await exited;
      held(child, false);
    },
  };
}

/**
 * The flag that stops a private server when this program ends, however it
 * ends; cairn before it refuses it (exit 2, "unknown flag").
 */
const stopOnEOF = "--stop-on-stdin-eof";

/** A server that listens: its process, its exit, and its URL. */
interface Started {
  child: ChildProcess;
  exited: Promise<void>;
  url: string;
}

/** cairn serve exited instead of listening: its exit status and standard error. */
class Refused extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }

  /**
   * refuses reports whether cairn refused flag: exit 2 (usage), naming it
   * ("unknown flag --F", or the flag package's "flag provided but not defined: -F").
   */
  refuses(flag: string): boolean {
    return this.exitCode === 2 && this.stderr.includes(flag.replace(/^-+/, ""));
  }
}

/** launch starts `bin args` and resolves once it listens; a server that does not is killed. */
async function launch(bin: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Started> {
  const child = spawn(bin, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  // A binary that cannot be started emits "error" and never "exit".
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  try {
    return { child, exited, url: await listening(child, timeoutMs) };
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    // Its pipes may outlive it (a wrapper's own child holds them open):
    // left open, they would keep the program running after the rejection.
    for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
    throw e;
  }
}

/**
 * exitWords resolves with the words for a server that has exited, or
 * undefined if it runs. Asked when it did not answer: a server killed
 * mid-call closes its connections a moment before its exit is seen, so
 * that moment is waited for (at most a second).
 */
async function exitWords(child: ChildProcess, exited: Promise<void>): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((r) => {
    timer = setTimeout(r, 1000);
    timer.unref();
  });
  await Promise.race([exited, late]);
  clearTimeout(timer);
  const how = child.signalCode !== null ? `killed by ${child.signalCode}` : child.exitCode !== null ? `exit status ${child.exitCode}` : undefined;
  return how && `the cairn serve that startServer() started has exited (${how}): start another to go on`;
}

/** The servers started and not yet closed, stopped when the program exits. */
const running = new Set<ChildProcess>();

function stopAll(): void {
  for (const child of running) stop(child);
}

/** stop asks a server to stop (SIGTERM: it answers the requests in flight first), if it still runs. */
function stop(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}

/** held refs (or unrefs) the child and its pipes: whether they keep the event loop alive. */
function held(child: ChildProcess, on: boolean): void {
  for (const h of [child, child.stdin, child.stdout, child.stderr] as ({ ref?(): void; unref?(): void } | null)[]) {
    if (on) h?.ref?.();
    else h?.unref?.();
  }
}

/** listening resolves with the URL `cairn serve` prints once it listens. */
function listening(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let errText = "";
    const timer = setTimeout(() => done(new Error(`start cairn serve: no address after ${timeoutMs} ms: ${errText.trim()}`)), timeoutMs);
    const done = (err: Error | null, url?: string) => {
      clearTimeout(timer);
      child.stdout?.removeAllListeners("data");
      child.removeAllListeners("error");
      if (err) reject(err);
      else resolve(url!);
    };
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (d: string) => {
      if (errText.length < 4096) errText += d;
    });
    child.stdout?.on("data", (d: string) => {
      out += d;
      const m = /cairn serve: (http:\/\/\S+)/.exec(out);
      if (m) done(null, m[1]);
    });
    child.once("error", (e: NodeJS.ErrnoException) =>
      done(
        new Error(
          e.code === "ENOENT" || e.code === "EACCES"
            ? `start cairn serve: cairn binary ${JSON.stringify(child.spawnfile)} ${e.code === "ENOENT" ? "not found" : "not executable"}: pass bin, set CAIRN_BIN or put cairn on PATH`
            : `start cairn serve: ${e.message}`,
        ),
      ),
    );
    // "close", not "exit": all it wrote to stderr has been read by then.
    child.once("close", (code) => done(new Refused(`start cairn serve: exited with ${code}: ${errText.trim()}`, code, errText)));
  });
}
