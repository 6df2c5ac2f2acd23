/**
 * A private `cairn serve` for one program: started on a free loopback
 * port with a fresh random token, stopped by {@link LocalServer.close}, or
 * else when the program exits, however it exits. It does not keep the
 * program running.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { CairnClient } from "./index.js";

/** Options of {@link startServer}. */
export interface LocalOptions {
  /** The store URL (default $CAIRN_STORE, else cairn's local default). */
  store?: string;
  /** The cairn binary (default $CAIRN_BIN, else `cairn` on PATH). */
  bin?: string;
  /** More environment for the server (for example S3 credentials). */
  env?: Record<string, string>;
  /** Seconds to wait for the server to listen (default 30). */
  startTimeout?: number;
}

/** A running private server and a client for it. */
export interface LocalServer {
  /** Its URL, http://127.0.0.1:PORT. */
  url: string;
  /** Its bearer token. */
  token: string;
  /** A client for it. */
  client: CairnClient;
  /** Stop the server and wait for it to exit. */
  close(): Promise<void>;
}

/** Start `cairn serve` on a free loopback port with a fresh token. */
export async function startServer(opts: LocalOptions = {}): Promise<LocalServer> {
  const bin = opts.bin ?? process.env.CAIRN_BIN ?? "cairn";
  const token = randomBytes(24).toString("hex");
  const args: string[] = [];
  const store = opts.store ?? process.env.CAIRN_STORE;
  if (store) args.push("--store", store);
  // The server stops when its stdin ends: when this program exits, even
  // killed by a signal that runs no exit handler, the pipe's end closes.
  args.push("serve", "--listen", "127.0.0.1:0", "--stop-on-stdin-eof");
  const child = spawn(bin, args, {
    env: { ...process.env, ...opts.env, CAIRN_TOKEN: token },
    stdio: ["pipe", "pipe", "pipe"],
  });
  // A binary that cannot be started emits "error" and never "exit".
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  let url: string;
  try {
    url = await listening(child, (opts.startTimeout ?? 30) * 1000);
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    throw e;
  }
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
  return {
    url,
    token,
    client: new CairnClient({ url, token }),
    async close() {
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
    child.once("exit", (code) => done(new Error(`start cairn serve: exited with ${code}: ${errText.trim()}`)));
  });
}
