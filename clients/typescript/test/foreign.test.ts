// A URL that reaches some other HTTP server, not cairn serve (a wrong port).
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { CairnClient, CairnError, NotFoundError } from "../src/index.js";
import { startServer } from "../src/local.js";
import { cairnBin, tempDir } from "./harness.js";

describe("another server at the URL", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // HTML pages: 200 for /v1/sessions, 404 for any other GET, 501 for POST.
    server = createServer((req, res) => {
      const status = req.method === "POST" ? 501 : req.url!.startsWith("/v1/sessions") && !req.url!.startsWith("/v1/sessions/") ? 200 : 404;
      req.resume();
      req.on("end", () => {
        res.writeHead(status, { "Content-Type": "text/html" });
        res.end(`<!DOCTYPE html><html><body><h1>${status}</h1></body></html>`);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  for (const transport of ["node:http", "fetch"] as const) {
    it(`is no new session, and says to check the URL (${transport})`, async () => {
      // head() returned undefined, as for a session with no steps, because
      // the web server's 404 page was taken for cairn's; error texts were
      // its whole HTML page, and a 200 page a bare SyntaxError.
      const c = new CairnClient({ url, fetch: transport === "fetch" ? fetch : undefined });
      const hint = `from ${url}, without cairn's JSON in its body: is that the URL of cairn serve?`;
      const h = await c.head("s").catch((x) => x);
      expect(h).toBeInstanceOf(NotFoundError);
      expect(h.code).toBe("http");
      expect(h.message).toBe(`cairn: 404 http: 404 Not Found ${hint}`);
      const w = await c.commit("s", { n: 1 }).catch((x) => x);
      expect(w).toBeInstanceOf(CairnError);
      expect(w.message).toBe(`cairn: 501 http: 501 Not Implemented ${hint}`);
      const l = await c.sessions().catch((x) => x);
      expect(l).toBeInstanceOf(CairnError);
      expect(l.message).toBe(`cairn: 200 http: 200 OK ${hint}`);
    });
  }
});

const bin = cairnBin();

describe.skipIf(!bin)("a wrong path prefix before cairn serve's routes", () => {
  it("is no new session: head() is a NotFoundError with the code no_route", async () => {
    // cairn serve's 404 for a path no route takes had the code not_found,
    // as for a session with no steps: head() through a URL with a wrong
    // path prefix returned undefined, and a loop began the session afresh.
    const dir = tempDir();
    const srv = await startServer({ bin, store: dir });
    try {
      const c = new CairnClient({ url: srv.url + "/api", token: srv.token });
      const e = await c.head("s").catch((x) => x);
      expect(e).toBeInstanceOf(NotFoundError);
      expect(e.code).toBe("no_route");
      expect(e.message).toBe("cairn: 404 no_route: no route GET /api/v1/sessions/s/head");
      expect(await srv.client.head("s")).toBeUndefined();
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a server that redirects", () => {
  for (const transport of ["node:http", "fetch"] as const) {
    it(`is answered, not followed (${transport})`, async () => {
      // fetch followed a 301, turning a commit's POST into a GET of the
      // new URL; node:http follows none, and now neither transport does.
      const seen: string[] = [];
      const redirects: Server = createServer((req, res) => {
        seen.push(req.method!);
        req.resume();
        req.on("end", () => {
          res.writeHead(301, { Location: "http://127.0.0.1:1" + req.url, "Content-Length": "0" });
          res.end();
        });
      });
      await new Promise<void>((r) => redirects.listen(0, "127.0.0.1", r));
      try {
        const url = `http://127.0.0.1:${(redirects.address() as { port: number }).port}`;
        const c = new CairnClient({ url, fetch: transport === "fetch" ? fetch : undefined });
        const e = await c.commit("s", { n: 1 }).catch((x) => x);
        expect(e).toBeInstanceOf(CairnError);
        expect(e.status).toBe(301);
        expect(e.message).toBe(`cairn: 301 http: 301 Moved Permanently from ${url}, without cairn's JSON in its body: is that the URL of cairn serve?`);
        expect(seen).toEqual(["POST"]);
      } finally {
        await new Promise((r) => redirects.close(r));
      }
    });
  }
});
