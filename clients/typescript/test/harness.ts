// Test harness shared by this package's tests and the LangGraph
// checkpointer's: the cairn binary, and a real MinIO started on a loopback
// port with random credentials (as internal/s3test does). Under CI=true a
// server that cannot start fails the test; elsewhere the test is skipped.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** required reports whether a missing server or binary must fail (CI=true). */
export function required(): boolean {
  return process.env.CI === "true" || process.env.CAIRN_REQUIRE_SERVERS === "1";
}

/** cairnBin is $CAIRN_BIN, else the repository's .cache/bin/cairn (make build). */
export function cairnBin(): string | undefined {
  const p = process.env.CAIRN_BIN || join(repoRoot, ".cache/bin/cairn");
  return existsSync(p) ? p : undefined;
}

/** minioBin is $CAIRN_MINIO, else the repository's .cache/bin/minio (make minio). */
export function minioBin(): string | undefined {
  const p = process.env.CAIRN_MINIO || join(repoRoot, ".cache/bin/minio");
  return existsSync(p) ? p : undefined;
}

/** freePort returns a loopback port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** A running MinIO with one bucket. */
export interface MinIO {
  endpoint: string;
  host: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** The environment a cairn process needs to reach it. */
  env: Record<string, string>;
  /** A minio:// store URL under a fresh prefix. */
  storeURL(): string;
  stop(): Promise<void>;
}

const region = "us-east-1";

/** startMinIO starts MinIO and makes a bucket; it throws if it cannot. */
export async function startMinIO(bin: string): Promise<MinIO> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startMinIOOnce(bin);
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

async function startMinIOOnce(bin: string): Promise<MinIO> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-minio-"));
  const port = await freePort();
  const consolePort = await freePort();
  const host = `127.0.0.1:${port}`;
  const accessKey = "cairn" + randomBytes(8).toString("hex");
  const secretKey = randomBytes(20).toString("hex");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(MINIO_|AWS_|VGW_|ROOT_)/.test(k)) continue;
    env[k] = v;
  }
  Object.assign(env, {
    MINIO_ROOT_USER: accessKey,
    MINIO_ROOT_PASSWORD: secretKey,
    MINIO_REGION: region,
    MINIO_BROWSER: "off",
    MINIO_UPDATE: "off",
  });
  const child: ChildProcess = spawn(bin, ["server", "--quiet", "--address", host, "--console-address", `127.0.0.1:${consolePort}`, join(dir, "data")], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    cwd: dir,
  });
  let log = "";
  const keep = (d: Buffer) => {
    if (log.length < 1 << 16) log += d.toString();
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const endpoint = `http://${host}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`minio exited before it was ready:\n${log}`);
    }
    try {
      const r = await fetch(endpoint + "/minio/health/live", { signal: AbortSignal.timeout(2000) });
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`minio on ${host} not ready after 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const bucket = "cairn-test-" + randomBytes(6).toString("hex");
  await makeBucket(endpoint, host, bucket, accessKey, secretKey);
  let n = 0;
  return {
    endpoint,
    host,
    bucket,
    accessKey,
    secretKey,
    env: { AWS_ACCESS_KEY_ID: accessKey, AWS_SECRET_ACCESS_KEY: secretKey, AWS_REGION: region },
    storeURL: () => `minio://${host}/${bucket}/t${++n}-${randomBytes(4).toString("hex")}?secure=false`,
    stop,
  };
}

/** makeBucket sends one SigV4-signed PUT Bucket request, retrying while MinIO warms up. */
async function makeBucket(endpoint: string, host: string, bucket: string, ak: string, sk: string): Promise<void> {
  let last = "";
  for (let i = 0; i < 100; i++) {
    const now = new Date();
    const amzDate = now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
    const date = amzDate.slice(0, 8);
    const payload = createHash("sha256").update("").digest("hex");
    const canonical = ["PUT", `/${bucket}`, "", `host:${host}`, `x-amz-content-sha256:${payload}`, `x-amz-date:${amzDate}`, "", "host;x-amz-content-sha256;x-amz-date", payload].join("\n");
    const scope = `${date}/${region}/s3/aws4_request`;
    const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
    let key: Buffer = createHmac("sha256", "AWS4" + sk).update(date).digest();
    for (const part of [region, "s3", "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
    const sig = createHmac("sha256", key).update(toSign).digest("hex");
    const r = await fetch(`${endpoint}/${bucket}`, {
      method: "PUT",
      headers: {
        "x-amz-date": amzDate,
        "x-amz-content-sha256": payload,
        Authorization: `AWS4-HMAC-SHA256 Credential=${ak}/${scope}, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${sig}`,
      },
    });
    if (r.ok) return;
    last = `${r.status} ${await r.text()}`;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`make bucket ${bucket}: ${last}`);
}

/** tempDir makes a fresh temporary directory. */
export function tempDir(prefix = "cairn-ts-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
