/**
 * A LangGraph.js checkpointer that keeps checkpoints in cairn, through
 * `cairn serve` (the HTTP API), with @cairnlog/client.
 *
 * Mapping. A thread's namespace is a chain of cairn steps in one session;
 * every checkpoint is a step, and every putWrites a further step of the
 * same checkpoint (its state plus the new pending writes). A checkpoint
 * whose parent is not the newest one of its session (time travel,
 * LangGraph's branching history) starts a fork of the parent's step: a
 * new session that shares all of the parent's data, so `cairn log` shows
 * the tree. Session names are PREFIX.THREAD.NS.BRANCH, each part encoded
 * into the characters a session name allows.
 *
 * Storage. A step's state is JSON: the checkpoint, its metadata, the
 * channels and the pending writes, where every value LangGraph serialises
 * as JSON is kept as JSON structure, not as opaque bytes. cairn stores
 * JSON structurally and dedups it, so carrying a channel over from the
 * parent costs nothing and a message appended to a list costs the message.
 * As LangGraph's own savers do, a checkpoint keeps the values of the
 * channels named in newVersions and carries the others over from its
 * parent when their version there is the same.
 *
 * Traffic. A step is committed as a JSON Patch against the state of the
 * step it follows whenever the saver holds that state (it keeps the states
 * it wrote and read): the request carries what changed (a message appended
 * to a list, the changed channels, a new pending write), and the server
 * stores exactly the bytes the whole state would give. The commit names
 * the step it follows (`expect`), so a state that is no longer the head
 * cannot be patched: the saver then looks the head up again. It also
 * remembers the newest step it wrote in each namespace, so that a
 * thread's next checkpoint or write goes out as one request.
 *
 * Reading. list and getTuple read a thread's branches newest first: the
 * heads, then each branch's history a page at a time, only while it may
 * hold a checkpoint newer than the newest one found, so list with a limit
 * and time travel to a recent checkpoint read what they return, not the
 * thread's history. Each step's record names the checkpoint before its
 * own in its session (below), which also says that the session's ids
 * never went down; a session without it is read whole.
 */
import { createHash, randomBytes } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { ListSerializer } from "./elements.js";
import { CairnClient, ConflictError, InvalidError, NotFoundError, makePatch, type ClientOptions, type Step } from "@cairnlog/client";

/** A value as LangGraph's serializer wrote it: JSON kept as structure, anything else as base64. */
type Encoded = { json: unknown } | { type: string; b64: string };

/** One pending write as stored. */
interface StoredWrite {
  task: string;
  idx: number;
  channel: string;
  path: string;
  value: Encoded;
}

/** The JSON state of one step. */
interface StepState {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: Encoded;
  metadata: Encoded;
  channels: Record<string, { version: number | string; value: Encoded }>;
  writes: StoredWrite[];
}

/** The record of one step: what it is, and for which checkpoint. */
interface StepRecord {
  langgraph: "checkpoint" | "writes";
  checkpoint_id: string;
  writes: number;
  /**
   * The checkpoint of the session's own steps before this checkpoint's
   * (null: none; a session's own steps are those after its fork point).
   * Present, it also says that the session's own steps, from its first up
   * to this one, have checkpoint ids that never go down, so its history
   * read newest first holds each older checkpoint after every newer one,
   * and below is the newest of them (see Branch). Absent on a session
   * written otherwise (before savers wrote it, or a checkpoint put after a
   * newer one): such a session is read whole.
   */
  below?: string | null;
}

/** Where the newest state of a checkpoint lives. */
interface Located {
  session: string;
  step: number;
  writes: number;
}

/** The newest step this process wrote in a namespace: the one its next step most likely follows. */
interface Tip {
  session: string;
  step: number;
  checkpointId: string;
  /** Its record's below. */
  below: string | null | undefined;
}

/** A checkpoint's newest state in one branch, as a branch's history names it. */
interface Found extends Located {
  id: string;
  /** The branch's session-name base (its thread and namespace): checkpoints are one per base and id. */
  base: string;
  /** What the merge orders by, newest first: id, then base. */
  key: string;
  /** The record's below. */
  below: string | null | undefined;
}

/** Options of a {@link CairnSaver}. */
export interface CairnSaverOptions extends ClientOptions {
  /** A client to use instead of one made from the other options. */
  client?: CairnClient;
  /**
   * The first part of every session name (default "lg"): several apps can
   * share a workspace under different prefixes. 1 to 24 of A-Z a-z 0-9 _ -.
   */
  prefix?: string;
  /** LangGraph's serializer (default its JsonPlusSerializer). */
  serde?: SerializerProtocol;
  /**
   * Send each step as a JSON Patch against the step it follows when the
   * saver holds that step's state (default true). Off, every request
   * carries the whole state; what is stored is the same.
   */
  patches?: boolean;
}

const maxRetries = 8;
const maxTips = 1024;
/** Channel values whose encoding encChannel keeps, to read only what is new in the next. */
const maxTexts = 64;
const logPage = 1000;
/** The first page of a branch's history read lazily: each next page is twice as long, up to logPage. */
const firstPage = 8;

/** The put of a checkpoint, awaited by its writes. */
interface Arrival {
  promise: Promise<void>;
  /** settles the arrival: the checkpoint is stored, or (with failed) its put failed. */
  resolve: (failed?: unknown) => void;
  done: boolean;
  /** Why the checkpoint's last put failed, if it did. */
  failed?: unknown;
}

/** NotYet: the checkpoint a putWrites names is not stored yet. */
class NotYet extends Error {}

/** A LangGraph checkpointer on cairn. */
export class CairnSaver extends BaseCheckpointSaver {
  /** The client it talks to. */
  readonly client: CairnClient;
  /** The first part of its session names. */
  readonly prefix: string;
  /** Steps are immutable: their states are cached by session@step, a bounded number of them. */
  private readonly states = new Map<string, StepState>();
  /** One chain of appends per thread namespace, so this process's own writers never race each other. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /** The newest step this process wrote, by namespace (session-name base). */
  private readonly tips = new Map<string, Tip>();
  /** The last encoding of a channel's value, by namespace and channel, with its text. */
  private readonly texts = new Map<string, { text?: string; parts?: string[]; enc: { json: unknown } }>();
  /** Puts under way, by namespace, with their checkpoint ids: later checkpoints' writes wait for them (settle). */
  private readonly putting = new Map<string, Map<Promise<unknown>, string>>();
  /** Lists serialised element by element, with the default serializer. */
  private readonly lists: ListSerializer | undefined;
  /** Whether to commit patches. */
  private readonly patches: boolean;
  /** Checkpoints put by this process, by namespace and id: resolved when stored. */
  private readonly arrivals = new Map<string, Arrival>();

  constructor(opts: CairnSaverOptions = {}) {
    super(opts.serde);
    this.client = opts.client ?? new CairnClient(opts);
    this.prefix = opts.prefix ?? "lg";
    this.patches = opts.patches ?? true;
    this.lists = ListSerializer.applies(this.serde) ? new ListSerializer(this.serde) : undefined;
    if (!/^[A-Za-z0-9_-]{1,24}$/.test(this.prefix)) {
      throw new Error(`prefix ${JSON.stringify(this.prefix)}: want 1 to 24 of A-Z a-z 0-9 _ -`);
    }
  }

  // ---- names ----

  /** base is the session-name prefix of a thread (and namespace, when given). */
  private base(threadId: string, ns?: string): string {
    return ns === undefined ? `${this.prefix}.${segment(threadId)}.` : `${this.prefix}.${segment(threadId)}.${segment(ns)}.`;
  }

  // ---- encoding ----

  private async enc(value: unknown): Promise<Encoded> {
    const [type, data] = await this.serde.dumpsTyped(value);
    if (type === "json") {
      const text = typeof data === "string" ? data : new TextDecoder().decode(data);
      return { json: JSON.parse(text) };
    }
    return { type, b64: Buffer.from(data).toString("base64") };
  }

  /**
   * encChannel encodes a channel's value as enc does, reading only what
   * is new since the value it encoded last under key: the same text gives
   * the same encoding, and a list whose text extends the last one's gives
   * the last list's elements followed by the new ones (so a growing message
   * list costs its new messages, and makePatch finds the rest unchanged).
   * With LangGraph's default serializer a list is serialised element by
   * element, each element again only if it changed (ListSerializer).
   */
  private async encChannel(key: string, value: unknown): Promise<Encoded> {
    const parts = this.lists && Array.isArray(value) && value.length > 0 ? await this.lists.parts(value) : undefined;
    const last = this.texts.get(key);
    let e: Encoded | undefined;
    if (parts) {
      // Unchanged elements give the very same strings: compare those, parse the new ones.
      const had = last?.parts && Array.isArray(last.enc.json) && last.parts.length <= parts.length && last.parts.every((p, i) => p === parts[i]) ? last : undefined;
      if (had && had.parts!.length === parts.length) e = had.enc;
      else if (had) e = { json: (had.enc.json as unknown[]).concat(parts.slice(had.parts!.length).map((p) => JSON.parse(p))) };
      else e = { json: parts.map((p) => JSON.parse(p)) };
      this.keep(key, { parts, enc: e });
      return e;
    }
    const [type, data] = await this.serde.dumpsTyped(value);
    if (type !== "json") return { type, b64: Buffer.from(data).toString("base64") };
    const text = typeof data === "string" ? data : new TextDecoder().decode(data);
    if (last && text === last.text) e = last.enc;
    else if (last?.text !== undefined && Array.isArray(last.enc.json) && extendsList(last.text, text)) {
      e = { json: last.enc.json.concat(JSON.parse("[" + text.slice(last.text.length))) };
    }
    e ??= { json: JSON.parse(text) };
    this.keep(key, { text, enc: e as { json: unknown } });
    return e;
  }

  private keep(key: string, v: { text?: string; parts?: string[]; enc: { json: unknown } }): void {
    this.texts.delete(key);
    this.texts.set(key, v);
    if (this.texts.size > maxTexts) this.texts.delete(this.texts.keys().next().value!);
  }

  private async dec(e: Encoded): Promise<any> {
    if ("json" in e) return this.serde.loadsTyped("json", JSON.stringify(e.json));
    return this.serde.loadsTyped(e.type, new Uint8Array(Buffer.from(e.b64, "base64")));
  }

  // ---- reading steps ----

  private async state(session: string, step: number): Promise<StepState> {
    const key = `${session}@${step}`;
    const hit = this.states.get(key);
    if (hit) return hit;
    const st = await this.client.step(session, step);
    const s = st.state as StepState;
    this.remember(key, s);
    return s;
  }

  private remember(key: string, s: StepState): void {
    this.states.delete(key);
    this.states.set(key, s);
    if (this.states.size > 256) this.states.delete(this.states.keys().next().value!);
  }

  /** cached returns the state of session@step if this process holds it. */
  private cached(session: string, step: number): StepState | undefined {
    return this.states.get(`${session}@${step}`);
  }

  /** heads lists the sessions under prefix with their heads' records. */
  private async heads(prefix: string): Promise<{ session: string; head: number; record: StepRecord; origin?: string }[]> {
    const out = [];
    for (const s of await this.client.sessions(prefix)) {
      const h = await this.client.head(s.session, { state: false });
      if (!h || !isRecord(h.record)) continue;
      out.push({ session: s.session, head: h.step, record: h.record, origin: h.origin });
    }
    return out;
  }

  /** ownSteps lists a session's own checkpoint and writes steps, newest first (not those a fork copied). */
  private async ownSteps(session: string): Promise<{ step: number; record: StepRecord }[]> {
    const out: { step: number; record: StepRecord }[] = [];
    let from: number | undefined;
    for (;;) {
      let page: Step[];
      try {
        page = await this.client.log(session, { limit: logPage, from });
      } catch (e) {
        if (e instanceof NotFoundError) return out;
        throw e;
      }
      for (const st of page) {
        if (st.session !== session || st.origin) return out;
        if (isRecord(st.record)) out.push({ step: st.step, record: st.record });
      }
      if (page.length < logPage) return out;
      from = page[page.length - 1].step - 1;
      if (from < 1) return out;
    }
  }

  /** branches opens every branch (session) under prefix at its head, to be read newest first. */
  private async branches(prefix: string): Promise<Branch[]> {
    const out: Branch[] = [];
    for (const s of await this.client.sessions(prefix)) {
      const h = await this.client.head(s.session, { state: false });
      // No steps, or none of its own yet (a fork whose first step did not land).
      if (!h || h.origin) continue;
      out.push(new Branch(this.client, s.session, h.step, isRecord(h.record) ? h.record : undefined));
    }
    return out;
  }

  /**
   * newestFirst yields each checkpoint of branches at its newest state (the
   * one with the most writes), newest first by id (then by thread and
   * namespace), reading the branches' histories only as far as it must:
   * the heads come first, and a branch's history is read, a page at a
   * time, only while it may hold a checkpoint newer than the newest one
   * found. A caller that stops early reads no more.
   */
  private async *newestFirst(branches: Branch[]): AsyncGenerator<Found> {
    for (;;) {
      let top: Found | undefined;
      for (const b of branches) if (b.front && (!top || b.front.key > top.key)) top = b.front;
      // A branch whose unread history may hold top or a newer one is read on.
      const behind = branches.find((b) => !b.front && !b.done && (!top || b.bound! >= top.key));
      if (behind) {
        await behind.load();
        continue;
      }
      if (!top) return;
      const key = top.key;
      for (const b of branches) {
        if (b.front?.key !== key) continue;
        if (b.front.writes > top.writes) top = b.front;
        b.consume();
      }
      yield top;
    }
  }

  /** locate finds the newest state of checkpoint id of a thread's namespace, reading its branches newest first. */
  private async locate(threadId: string, ns: string, id: string, branches?: Branch[]): Promise<Located | undefined> {
    for await (const f of this.newestFirst(branches ?? (await this.branches(this.base(threadId, ns))))) {
      if (f.id === id) return f;
      if (f.id < id) return undefined;
    }
    return undefined;
  }

  // ---- writing steps ----

  /** locked runs fn after every earlier append of this process to the same namespace. */
  private locked<T>(base: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(base) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(base, tail);
    void tail.then(() => {
      if (this.locks.get(base) === tail) this.locks.delete(base);
    });
    return run;
  }

  private arrival(key: string): Arrival {
    let a = this.arrivals.get(key);
    if (!a) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      const b: Arrival = { promise, resolve: (failed?: unknown) => ((b.done = true), (b.failed = failed), resolve()), done: false };
      a = b;
      this.arrivals.set(key, a);
      if (this.arrivals.size > 1024) this.arrivals.delete(this.arrivals.keys().next().value!);
    }
    return a;
  }

  /** behind reports whether this process is putting a checkpoint of namespace base older than id (ids sort by time). */
  private behind(base: string, id: string): boolean {
    for (const p of this.putting.get(base)?.values() ?? []) if (p < id) return true;
    return false;
  }

  /**
   * settle waits, before the writes of checkpoint id look for it, while
   * this process is still putting older checkpoints of namespace base:
   * LangGraph hands over a task's writes at once but puts checkpoints one
   * after another, so the checkpoint is most likely on its way. It returns
   * once that checkpoint is stored, once a newer one is being put (so this
   * one's put is not coming after it), or once nothing of this process is
   * under way in the namespace across a turn of the event loop.
   */
  private async settle(base: string, id: string): Promise<void> {
    const a = this.arrival(base + id);
    for (;;) {
      if (a.done) return;
      const under = this.putting.get(base);
      if (under && [...under.values()].some((p) => p > id)) return;
      const busy: Promise<unknown>[] = under ? [...under.keys()] : [];
      const lock = this.locks.get(base);
      if (lock) busy.push(lock);
      if (busy.length > 0) {
        await Promise.race([...busy, a.promise]).catch(() => undefined);
        continue;
      }
      await new Promise((r) => setImmediate(r));
      if (!this.locks.get(base) && !this.putting.get(base)) return;
    }
  }

  /**
   * append commits the state that next(current) returns after the newest
   * step of checkpoint `id`: on the session whose head it is, else on a
   * fork of its step. current is undefined when there is no such step.
   * Lost races are retried.
   */
  private async append(
    threadId: string,
    ns: string,
    id: string | undefined,
    next: (current: StepState | undefined) => Promise<{ state: StepState; record: StepRecord } | undefined>,
  ): Promise<void> {
    const base = this.base(threadId, ns);
    for (let attempt = 0; ; attempt++) {
      let target: string;
      let expect: number;
      let current: StepState | undefined;
      /** The record of target@expect if it is one of target's own steps; null if target has none before this one. */
      let prior: StepRecord | null | undefined;
      // The step this process wrote last here is most likely still the
      // head: try it without asking (expect fences it; a conflict asks).
      const tip = attempt === 0 && id !== undefined ? this.tips.get(base) : undefined;
      const tipState = tip && tip.checkpointId === id ? this.cached(tip.session, tip.step) : undefined;
      const heads = id === undefined || tipState ? [] : await this.heads(base);
      const atHead = heads.find((h) => h.record.checkpoint_id === id);
      if (tip && tipState) {
        target = tip.session;
        expect = tip.step;
        current = tipState;
        prior = { langgraph: "checkpoint", checkpoint_id: tip.checkpointId, writes: 0, below: tip.below };
      } else if (id === undefined) {
        target = base + "0";
        ({ expect, prior } = await this.rootHead(target));
      } else if (atHead) {
        target = atHead.session;
        expect = atHead.head;
        current = await this.state(target, expect);
        prior = atHead.origin ? null : atHead.record;
      } else {
        const at = await this.locate(threadId, ns, id);
        if (!at) {
          // An unknown parent: a new root on the thread's first branch.
          target = base + "0";
          ({ expect, prior } = await this.rootHead(target));
        } else {
          current = await this.state(at.session, at.step);
          target = base + "b" + randomBytes(8).toString("hex");
          const fork = await this.client.fork(at.session, target, { step: at.step });
          expect = fork.step;
          prior = null;
          this.remember(`${target}@${fork.step}`, current);
        }
      }
      const out = await next(current);
      if (!out) return;
      out.record = ordered(out.record, prior);
      try {
        // current is the state of target@expect: the head, if expect holds.
        const st = await this.commit(target, out, expect, current);
        this.wrote(base, target, st.step, out);
        return;
      } catch (e) {
        this.tips.delete(base);
        if (!(e instanceof ConflictError) || attempt >= maxRetries) throw e;
        if (id === undefined && e.head !== undefined && e.head !== expect) {
          // The session was removed and its name is in use again: go on after its old head.
          // Its own steps before this one are not known: the record claims
          // no order, nor may the tip wrote keeps of it (the next step put
          // there would claim one from it).
          out.record = ordered(out.record, undefined);
          const retry = await this.client.commit(target, out.state, { record: out.record, expect: e.head }).catch((err) => err);
          if (!(retry instanceof Error)) {
            this.wrote(base, target, retry.step, out);
            return;
          }
          if (!(retry instanceof ConflictError)) throw retry;
        }
      }
    }
  }

  /** rootHead reads the head of a thread's first branch: the step a root follows, and its record (null: none). */
  private async rootHead(target: string): Promise<{ expect: number; prior: StepRecord | null | undefined }> {
    const h = await this.client.head(target, { state: false });
    if (!h) return { expect: 0, prior: null };
    return { expect: h.step, prior: h.origin ? null : isRecord(h.record) ? h.record : undefined };
  }

  /**
   * commit stores out.state as the step after target@expect: as a patch
   * against current, the state of target@expect, when there is one.
   */
  private async commit(target: string, out: { state: StepState; record: StepRecord }, expect: number, current: StepState | undefined): Promise<Step> {
    const ops = this.patches && current ? makePatch(current, out.state) : undefined;
    if (ops) {
      try {
        return await this.client.patch(target, ops, { record: out.record, expect });
      } catch (e) {
        // A patch the server cannot apply (it should not happen): the whole state says the same.
        if (!(e instanceof InvalidError)) throw e;
      }
    }
    return this.client.commit(target, out.state, { record: out.record, expect });
  }

  /** wrote notes that out is stored as session@step, the newest step of namespace base. */
  private wrote(base: string, session: string, step: number, out: { state: StepState; record: StepRecord }): void {
    this.remember(`${session}@${step}`, out.state);
    this.tips.delete(base);
    this.tips.set(base, { session, step, checkpointId: out.record.checkpoint_id, below: out.record.below });
    if (this.tips.size > maxTips) this.tips.delete(this.tips.keys().next().value!);
  }

  // ---- BaseCheckpointSaver ----

  /** put stores a checkpoint after its parent (config's checkpoint_id) and returns its config. */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = threadOf(config, "put checkpoint");
    if (threadId === undefined) {
      throw new Error('put checkpoint: the config has no "thread_id" in its "configurable"');
    }
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const parentId: string | undefined = config.configurable?.checkpoint_id || undefined;
    const { channel_values, ...rest } = checkpoint;
    const base = this.base(threadId, ns);
    // Encoded while earlier steps are under way; its writes see the put under way (settle).
    const work = (async () => {
      const [encCheckpoint, encMetadata] = await Promise.all([this.enc(rest), this.enc(metadata)]);
      const fresh: Record<string, { version: number | string; value: Encoded }> = {};
      for (const ch of Object.keys(newVersions)) {
        if (Object.prototype.hasOwnProperty.call(channel_values, ch) && channel_values[ch] !== undefined) {
          fresh[ch] = { version: checkpoint.channel_versions[ch] ?? newVersions[ch], value: await this.encChannel(base + "\0" + ch, channel_values[ch]) };
        }
      }
      return this.locked(base, () => this.append(threadId, ns, parentId, async (parent) => {
        const channels: StepState["channels"] = {};
        for (const [ch, version] of Object.entries(checkpoint.channel_versions)) {
          if (ch in fresh) channels[ch] = fresh[ch];
          else if (parent?.channels[ch] && parent.checkpoint_id === parentId && parent.channels[ch].version === version) channels[ch] = parent.channels[ch];
        }
        for (const ch of Object.keys(fresh)) if (!(ch in channels)) channels[ch] = fresh[ch];
        const state: StepState = {
          thread_id: threadId,
          checkpoint_ns: ns,
          checkpoint_id: checkpoint.id,
          parent_checkpoint_id: parentId ?? null,
          checkpoint: encCheckpoint,
          metadata: encMetadata,
          channels,
          writes: [],
        };
        return { state, record: { langgraph: "checkpoint", checkpoint_id: checkpoint.id, writes: 0 } };
      }));
    })();
    let under = this.putting.get(base);
    if (!under) this.putting.set(base, (under = new Map()));
    under.set(work, checkpoint.id);
    try {
      await work;
    } catch (e) {
      // Writes waiting for this checkpoint learn at once that it is not coming.
      this.arrival(base + checkpoint.id).resolve(e);
      throw e;
    } finally {
      under.delete(work);
      if (under.size === 0 && this.putting.get(base) === under) this.putting.delete(base);
    }
    this.arrival(base + checkpoint.id).resolve();
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  /** putWrites stores a task's pending writes against the checkpoint in config. */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const threadId = threadOf(config, "put writes");
    const id = config.configurable?.checkpoint_id;
    if (threadId === undefined) {
      throw new Error('put writes: the config has no "thread_id" in its "configurable"');
    }
    if (typeof id !== "string" || id === "") {
      throw new Error('put writes: the config has no "checkpoint_id" in its "configurable"');
    }
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const base = this.base(threadId, ns);
    // Decided as the call comes, so that writes handed over before a newer put never wait for it.
    const wait = this.behind(base, id) && this.tips.get(base)?.checkpointId !== id;
    const encoded = await Promise.all(writes.map(async ([channel, value], i) => ({ channel, idx: WRITES_IDX_MAP[channel] ?? i, value: await this.enc(value) })));
    if (wait) await this.settle(base, id);
    const apply = () => this.locked(this.base(threadId, ns), () => this.append(threadId, ns, id, async (current) => {
      if (!current || current.checkpoint_id !== id) throw new NotYet();
      const all = [...current.writes];
      let changed = false;
      for (const w of encoded) {
        const at = all.findIndex((x) => x.task === taskId && x.idx === w.idx);
        const sw: StoredWrite = { task: taskId, idx: w.idx, channel: w.channel, path: taskPath, value: w.value };
        if (at >= 0) {
          if (w.idx >= 0) continue;
          all[at] = sw;
        } else all.push(sw);
        changed = true;
      }
      if (!changed) return undefined;
      return { state: { ...current, writes: all }, record: { langgraph: "writes", checkpoint_id: id, writes: all.length } };
    }));
    try {
      await apply();
    } catch (e) {
      if (!(e instanceof NotYet)) throw e;
      // LangGraph may send a checkpoint's writes before its put, which it
      // makes once this process has put the older ones: wait while any
      // put of the namespace is under way here, no longer.
      await this.settle(base, id);
      const failed = this.arrival(base + id).failed;
      if (failed !== undefined) {
        const why = failed instanceof Error ? failed.message : String(failed);
        throw new Error(`put writes: checkpoint ${id} of thread ${JSON.stringify(threadId)} was not stored: ${why}`, { cause: failed });
      }
      try {
        await apply();
      } catch (e2) {
        if (e2 instanceof NotYet) throw new Error(`put writes: checkpoint ${id} of thread ${JSON.stringify(threadId)} not found`);
        throw e2;
      }
    }
  }

  /** tuple builds a CheckpointTuple from a stored state. */
  private async tuple(s: StepState): Promise<CheckpointTuple> {
    const checkpoint = (await this.dec(s.checkpoint)) as Checkpoint;
    checkpoint.channel_values = {};
    for (const [ch, c] of Object.entries(s.channels)) checkpoint.channel_values[ch] = await this.dec(c.value);
    if (checkpoint.v < 4 && s.parent_checkpoint_id) {
      const at = await this.locate(s.thread_id, s.checkpoint_ns, s.parent_checkpoint_id);
      const parent = at ? await this.state(at.session, at.step) : undefined;
      const sends = [];
      for (const w of parent ? sortedWrites(parent.writes) : []) if (w.channel === TASKS) sends.push(await this.dec(w.value));
      checkpoint.channel_values[TASKS] = sends;
      checkpoint.channel_versions[TASKS] =
        Object.keys(checkpoint.channel_versions).length > 0 ? maxChannelVersion(...Object.values(checkpoint.channel_versions)) : this.getNextVersion(undefined);
    }
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const w of sortedWrites(s.writes)) pendingWrites.push([w.task, w.channel, await this.dec(w.value)]);
    const t: CheckpointTuple = {
      config: { configurable: { thread_id: s.thread_id, checkpoint_ns: s.checkpoint_ns, checkpoint_id: s.checkpoint_id } },
      checkpoint,
      metadata: (await this.dec(s.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (s.parent_checkpoint_id) {
      t.parentConfig = { configurable: { thread_id: s.thread_id, checkpoint_ns: s.checkpoint_ns, checkpoint_id: s.parent_checkpoint_id } };
    }
    return t;
  }

  /** getTuple returns the checkpoint in config, or the thread's newest one; undefined if there is none. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = threadOf(config, "get checkpoint");
    if (threadId === undefined) return undefined;
    const ns: string = config.configurable?.checkpoint_ns ?? "";
    const id: string | undefined = config.configurable?.checkpoint_id || undefined;
    if (id !== undefined) {
      // A config that names the thread's newest checkpoint (as invoke and
      // getState return it) names a head: found without reading history.
      // An older one is found reading the branches newest first, only as
      // far down as its id.
      const branches = await this.branches(this.base(threadId, ns));
      let head: Found | undefined;
      for (const b of branches) if (b.head?.id === id && (!head || b.head.writes > head.writes)) head = b.head;
      const at = head ?? (await this.locate(threadId, ns, id, branches));
      return at ? this.tuple(await this.state(at.session, at.step)) : undefined;
    }
    let newest: { session: string; head: number; record: StepRecord } | undefined;
    for (const h of await this.heads(this.base(threadId, ns))) {
      if (!newest || h.record.checkpoint_id > newest.record.checkpoint_id) newest = h;
    }
    return newest ? this.tuple(await this.state(newest.session, newest.head)) : undefined;
  }

  /** list yields checkpoints newest first (by id), filtered by thread, namespace, before, metadata and limit. */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let limit = options.limit;
    const threadId = threadOf(config, "list checkpoints");
    const ns: string | undefined = config.configurable?.checkpoint_ns;
    const onlyId: string | undefined = config.configurable?.checkpoint_id || undefined;
    const prefix = threadId !== undefined ? this.base(threadId, ns) : `${this.prefix}.`;
    const beforeId: string | undefined = before?.configurable?.checkpoint_id;
    if (limit !== undefined && limit <= 0) return;
    // Newest first, reading the branches only as far as the caller reads.
    for await (const at of this.newestFirst(await this.branches(prefix))) {
      if (beforeId !== undefined && at.id >= beforeId) continue;
      if (onlyId !== undefined && at.id !== onlyId) {
        if (at.id < onlyId) return;
        continue;
      }
      const s = await this.state(at.session, at.step);
      if (ns !== undefined && s.checkpoint_ns !== ns) continue;
      const t = await this.tuple(s);
      if (filter && !Object.entries(filter).every(([k, v]) => deepEqual((t.metadata as Record<string, unknown> | undefined)?.[k], v))) continue;
      yield t;
      if (limit !== undefined && --limit <= 0) return;
    }
  }

  /** deleteThread removes every session of a thread: all its namespaces and branches. */
  async deleteThread(threadId: string): Promise<void> {
    if (typeof threadId !== "string" || threadId === "") throw new TypeError(`delete thread: want a thread_id (a non-empty string), not ${shown(threadId)}`);
    for (const s of await this.client.sessions(this.base(threadId))) {
      try {
        await this.client.remove(s.session);
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
      for (const k of [...this.states.keys()]) if (k.startsWith(s.session + "@")) this.states.delete(k);
    }
    for (const k of [...this.tips.keys()]) if (k.startsWith(this.base(threadId))) this.tips.delete(k);
  }
}

/**
 * threadOf is config's thread_id; undefined if it has none. One that is no
 * string (a number, say) is a TypeError naming it: it was taken for no
 * thread_id at all, or reached Buffer's own TypeError.
 */
function threadOf(config: RunnableConfig, what: string): string | undefined {
  const t: unknown = config?.configurable?.thread_id;
  if (t === undefined || t === null || t === "") return undefined;
  if (typeof t !== "string") throw new TypeError(`${what}: want a thread_id that is a string, not ${shown(t)}`);
  return t;
}

function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "number" || typeof v === "boolean" || v === undefined || v === null) return String(v);
  return `a ${typeof v === "object" ? (Array.isArray(v) ? "list" : "object") : typeof v}`;
}

/** segment encodes s into a session-name part without dots: base64url, or for long values a hash of a length base64url never has. */
function segment(s: string): string {
  const b = Buffer.from(s, "utf8").toString("base64url");
  if (b.length <= 40) return b;
  return createHash("sha256").update(s, "utf8").digest("hex").slice(0, 41);
}

/** extendsList: JSON list text b is list text a with elements appended. */
function extendsList(a: string, b: string): boolean {
  return a.length > 2 && a[0] === "[" && a[a.length - 1] === "]" && b.length > a.length && b[a.length - 1] === "," && b[b.length - 1] === "]" && b.startsWith(a.slice(0, -1));
}

function isRecord(r: unknown): r is StepRecord {
  return typeof r === "object" && r !== null && typeof (r as StepRecord).checkpoint_id === "string" && typeof (r as StepRecord).langgraph === "string";
}

function sortedWrites(ws: StoredWrite[]): StoredWrite[] {
  return [...ws].sort((a, b) => compareWritesSortKeys(writesSortKey(a.path, a.task, a.idx), writesSortKey(b.path, b.task, b.idx)));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as any)[k], (b as any)[k]));
}

/**
 * ordered returns record with its below (see StepRecord.below), given
 * prior, the record of the step it follows in its session: null if the
 * session has no own step before it, undefined if not known. It has none
 * unless prior is null or has one and an id no greater than record's.
 */
function ordered(record: StepRecord, prior: StepRecord | null | undefined): StepRecord {
  const { below: _, ...rest } = record;
  if (prior === null) return { ...rest, below: null };
  if (prior === undefined || prior.below === undefined || prior.checkpoint_id > record.checkpoint_id) return rest;
  return { ...rest, below: prior.checkpoint_id === record.checkpoint_id ? prior.below : prior.checkpoint_id };
}

/**
 * Branch reads one branch (session) of a thread newest first: each
 * checkpoint of its own steps (not those its fork point copied), at its
 * newest state there, one at a time. front is the next one, once loaded;
 * the history not read yet holds no checkpoint whose key is above bound.
 * A session whose head has a below (an ordered session) is read lazily, a
 * page at a time, pages growing from firstPage to logPage, and not at all
 * below a checkpoint whose below is null; any other one is read whole at
 * its first load, and sorted.
 */
class Branch {
  /** The checkpoint of the head step, if its record names one. */
  readonly head: Found | undefined;
  front: Found | undefined;
  bound: string | undefined;
  done = false;
  private readonly base: string;
  private readonly queue: Found[] = [];
  private readonly seen = new Set<string>();
  /** Where the next page starts, or undefined once there are none. */
  private from: number | undefined;
  private page = firstPage;
  private readonly lazy: boolean;

  constructor(
    private readonly client: CairnClient,
    readonly session: string,
    head: number,
    record: StepRecord | undefined,
  ) {
    this.base = session.slice(0, session.lastIndexOf(".") + 1);
    this.head = record ? this.found(head, record) : undefined;
    this.lazy = this.head?.below !== undefined;
    if (this.lazy) {
      this.front = this.head;
      this.seen.add(this.head!.id);
      this.from = head > 1 ? head - 1 : undefined;
    } else {
      this.from = head;
      this.bound = "\uffff";
    }
  }

  private found(step: number, r: StepRecord): Found {
    const key = (id: string) => id + "\0" + this.base;
    return { session: this.session, step, writes: r.writes, id: r.checkpoint_id, base: this.base, key: key(r.checkpoint_id), below: typeof r.below === "string" ? key(r.below) : r.below };
  }

  /** consume drops front: the history not read yet lies below it. */
  consume(): void {
    const f = this.front;
    if (!f) return;
    this.front = this.queue.shift();
    if (this.front) return;
    // below is the key of the next checkpoint of an ordered session (null: there is none).
    if (f.below === null || this.from === undefined) this.done = true;
    else this.bound = f.below ?? f.key;
  }

  /** load reads the history until front is the next checkpoint, or there is none. */
  async load(): Promise<void> {
    while (!this.front && !this.done) {
      if (this.queue.length > 0) {
        this.front = this.queue.shift();
        return;
      }
      if (this.from === undefined) {
        this.done = true;
        return;
      }
      if (this.lazy) await this.readPage();
      else await this.readWhole();
    }
  }
  /** readPage queues the checkpoints of the next page of the history, newest first. */
  private async readPage(): Promise<void> {
    const limit = this.page;
    this.page = Math.min(this.page * 2, logPage);
    let page: Step[];
    try {
      page = await this.client.log(this.session, { limit, from: this.from });
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      page = [];
    }
    this.from = undefined;
    for (const st of page) {
      if (st.session !== this.session || st.origin) return;
      if (isRecord(st.record) && !this.seen.has(st.record.checkpoint_id)) {
        this.seen.add(st.record.checkpoint_id);
        this.queue.push(this.found(st.step, st.record));
      }
      if (st.truncated || st.parent === null) return;
    }
    const last = page[page.length - 1];
    if (page.length === limit && last.step > 1) this.from = last.step - 1;
  }

  /** readWhole queues every checkpoint of the session's own steps, newest first by id. */
  private async readWhole(): Promise<void> {
    const from = this.from!;
    this.from = undefined;
    const all: Found[] = [];
    let next: number | undefined = from;
    while (next !== undefined) {
      let page: Step[];
      try {
        page = await this.client.log(this.session, { limit: logPage, from: next });
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
        break;
      }
      next = undefined;
      let end = false;
      for (const st of page) {
        if (st.session !== this.session || st.origin) {
          end = true;
          break;
        }
        // The newest step of a checkpoint in a session holds all its writes there.
        if (isRecord(st.record) && !this.seen.has(st.record.checkpoint_id)) {
          this.seen.add(st.record.checkpoint_id);
          all.push(this.found(st.step, st.record));
        }
        if (st.truncated || st.parent === null) {
          end = true;
          break;
        }
      }
      const last = page[page.length - 1];
      if (!end && page.length === logPage && last.step > 1) next = last.step - 1;
    }
    all.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
    this.queue.push(...all);
  }
}
