// The demo page: follows the election through the npm client (the controller's /v1/events,
// proxied by the demo service) and polls the ledger and the recent transitions demo serve saw,
// so one origin serves everything and a page loaded after a failover still shows it.
import { hasHolder, RemoteLeaseObserver, type State } from "@regbo/lfp-swarm-lease";

/** A ledger entry as GET /api/ledger returns it. */
interface Entry {
  seq: number;
  fence: number;
  holder: string;
  node?: string;
  task?: string;
  written_at: string;
  received_at: string;
  accepted: boolean;
  /** Why a write was rejected: its fence below the highest accepted, or above the highest issued. */
  reason?: "stale" | "not_issued";
  /** The fence that beat a stale write. */
  highest?: number;
  /** The highest fence the election had issued when a write was rejected as not issued. */
  issued?: number;
}

/** GET /api/ledger. */
interface Ledger {
  highest_fence: number;
  counts: { accepted: number; rejected: number; not_issued: number };
  accepted: Entry[];
  rejected: Entry[];
}

/** A new term or a vacancy, as GET /api/transitions returns it (or the page saw it). */
interface Transition {
  kind: "term" | "vacancy";
  /** The term's fence; for a vacancy, the fence of the term that ended. */
  fence: number;
  holder_id?: string;
  node_id?: string;
  task_id?: string;
  at: string;
}

const shownAccepted = 12;
const shownTransitions = 20;
/** The ledger's poll interval, and the faster one while a new leader's first write is awaited. */
const pollMs = 1000;
const fastPollMs = 200;
const fastPollForMs = 5000;

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

function setConnection(state: "live" | "reconnecting"): void {
  const el = $("connection");
  el.dataset.state = state;
  el.textContent = state === "live" ? "live" : "reconnecting…";
}

function time(iso: string | Date): string {
  return new Date(iso).toLocaleTimeString([], { hour12: false });
}

// Every fence the page knows of, to compare each one with the term before it.
const fences = new Set<number>();

/** The fence to compare f with: the next lower one the page knows, else the next higher. */
function neighbour(f: number): number | undefined {
  let lower: number | undefined;
  let higher: number | undefined;
  for (const g of fences) {
    if (g < f && (lower === undefined || g > lower)) lower = g;
    if (g > f && (higher === undefined || g < higher)) higher = g;
  }
  return lower ?? higher;
}

/**
 * A fence, its digits from the first one that differs from other's marked: terms follow each
 * other by one, so consecutive fences differ in their last digit or two.
 */
function fenceEl(f: number, other = neighbour(f)): HTMLSpanElement {
  const el = document.createElement("span");
  el.className = "fence";
  el.dataset.fence = String(f);
  const s = String(f);
  const o = other === undefined || other === f ? s : String(other);
  let i = 0;
  while (o !== s && o.length === s.length && s[i] === o[i]) i++;
  if (i >= s.length) {
    el.textContent = s;
    return el;
  }
  const same = document.createElement("span");
  same.className = "same";
  same.textContent = s.slice(0, i);
  const changed = document.createElement("mark");
  changed.textContent = s.slice(i);
  el.append(same, changed);
  return el;
}

/** A table cell: text (textContent: nothing from the server is parsed as HTML) or a fence. */
function cell(label: string, content: string | HTMLElement): HTMLTableCellElement {
  const td = document.createElement("td");
  td.dataset.label = label;
  if (typeof content === "string") {
    td.textContent = content;
    td.title = content;
  } else {
    td.append(content);
  }
  return td;
}

function row(cells: HTMLTableCellElement[], attrs: Record<string, string>): HTMLTableRowElement {
  const tr = document.createElement("tr");
  for (const [k, v] of Object.entries(attrs)) tr.setAttribute(k, v);
  tr.append(...cells);
  return tr;
}

// The transitions: demo serve's, and those this page saw itself that demo serve has not (yet).
let serverTransitions: Transition[] = [];
let seenTransitions: Transition[] = [];
let ledger: Ledger | undefined;
let current: State | undefined;

const key = (t: Transition) => `${t.kind}:${t.fence}:${t.kind === "term" ? (t.holder_id ?? "") : ""}`;

/** Newest first: by fence, and a term's vacancy after (newer than) the term itself. */
function transitions(): Transition[] {
  const known = new Set(serverTransitions.map(key));
  const all = [...serverTransitions, ...seenTransitions.filter((t) => !known.has(key(t)))];
  all.sort((a, b) => b.fence - a.fence || (a.kind === b.kind ? 0 : a.kind === "vacancy" ? -1 : 1));
  return all.slice(0, shownTransitions);
}

function render(): void {
  fences.clear();
  const list = transitions();
  for (const t of list) fences.add(t.fence);
  for (const e of [...(ledger?.accepted ?? []), ...(ledger?.rejected ?? [])]) {
    fences.add(e.fence);
    if (e.highest) fences.add(e.highest);
    if (e.issued) fences.add(e.issued);
  }
  if (current?.fence) fences.add(current.fence);
  renderLeader();
  renderTimeline(list);
  renderLedger();
}

function renderLeader(): void {
  const s = current;
  const live = s !== undefined && hasHolder(s);
  const holder = $("holder");
  holder.textContent = live ? s.holder_id : s ? "no leader" : "—";
  holder.toggleAttribute("data-vacant", s !== undefined && !live);
  $("fence").replaceChildren(live && s.fence ? fenceEl(s.fence) : "—");
  $("node").textContent = (live && s.node_id) || "—";
  $("task").textContent = (live && s.task_id) || "—";
  document.body.dataset.fence = String(s?.fence ?? "");
  document.body.dataset.holder = live ? s.holder_id : "";
}

function renderTimeline(list: Transition[]): void {
  $("timeline").replaceChildren(
    ...list.map((t) => {
      const li = document.createElement("li");
      li.dataset.kind = t.kind;
      li.dataset.fence = String(t.fence);
      if (t.kind === "term") {
        li.append(`${time(t.at)} — ${t.holder_id} leads with fence `, fenceEl(t.fence));
      } else {
        li.append(`${time(t.at)} — no leader (the term of fence `, fenceEl(t.fence), " ended)");
      }
      return li;
    }),
  );
}

function renderLedger(): void {
  const l = ledger;
  if (!l) return;
  $("highest").replaceChildren(l.highest_fence ? fenceEl(l.highest_fence) : "—");
  $("counts").textContent =
    `${l.counts.accepted} accepted, ${l.counts.rejected - l.counts.not_issued} stale, ${l.counts.not_issued} not issued`;
  $("accepted").replaceChildren(
    ...l.accepted
      .slice(0, shownAccepted)
      .map((e) =>
        row(
          [
            cell("#", String(e.seq)),
            cell("time", time(e.received_at)),
            cell("fence", fenceEl(e.fence)),
            cell("writer", e.holder),
          ],
          { "data-fence": String(e.fence) },
        ),
      ),
  );
  $("rejected").replaceChildren(
    ...l.rejected.map((e) => {
      // The rejected fence and the one it was held against — the fence that beat a stale write,
      // the highest the election had issued for one no leader was given — each marked where it
      // differs from the other.
      const notIssued = e.reason === "not_issued";
      const against = (notIssued ? e.issued : e.highest) ?? 0;
      const why = document.createElement("span");
      why.append(notIssued ? "not issued: the election is at " : "beaten by ", fenceEl(against, e.fence));
      return row(
        [
          cell("#", String(e.seq)),
          cell("time", time(e.received_at)),
          cell("fence", fenceEl(e.fence, against)),
          cell("why", why),
          cell("writer", e.holder),
        ],
        { class: notIssued ? "unissued" : "stale", "data-fence": String(e.fence) },
      );
    }),
  );
}

function showState(s: State): void {
  const prev = current;
  current = s;
  const live = hasHolder(s);
  const wasLive = prev !== undefined && hasHolder(prev);
  if (live && !(wasLive && prev.holder_id === s.holder_id && prev.fence === s.fence)) {
    seenTransitions.push({
      kind: "term",
      fence: s.fence,
      holder_id: s.holder_id,
      node_id: s.node_id,
      task_id: s.task_id,
      at: s.acquired_at ?? new Date().toISOString(),
    });
    awaitFirstWrite(s.fence);
  } else if (!live && s.exists && (prev === undefined || wasLive)) {
    seenTransitions.push({ kind: "vacancy", fence: s.fence, at: new Date().toISOString() });
    wake();
  }
  seenTransitions = seenTransitions.slice(-shownTransitions);
  render();
}

// The poll: every second, and every 200 ms from a new term until its first write is shown (a
// leader writes when its term starts) or five seconds have passed.
let awaited: { fence: number; until: number } | undefined;
let wakeUp: (() => void) | undefined;

function wake(): void {
  wakeUp?.();
}

function awaitFirstWrite(fence: number): void {
  awaited = { fence, until: performance.now() + fastPollForMs };
  wake();
}

async function getJSON<T>(path: string): Promise<T | undefined> {
  try {
    const res = await fetch(path, { cache: "no-store" });
    return res.ok ? ((await res.json()) as T) : undefined;
  } catch {
    return undefined; // the demo service is restarting: the next poll shows it again
  }
}

async function poll(): Promise<never> {
  for (;;) {
    const [l, t] = await Promise.all([
      getJSON<Ledger>("/api/ledger"),
      getJSON<{ transitions: Transition[] }>("/api/transitions"),
    ]);
    if (l) ledger = l;
    if (t) serverTransitions = t.transitions;
    if (l || t) render();
    const a = awaited;
    if (a && (performance.now() > a.until || l?.accepted.some((e) => e.fence >= a.fence))) awaited = undefined;
    const ms = awaited ? fastPollMs : pollMs;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wakeUp = undefined;
  }
}

/** The stream's fetch, watched: an answer means live, a failure or an ended stream reconnecting. */
async function watchedFetch(req: Request): Promise<Response> {
  try {
    const res = await fetch(req);
    if (!res.ok || !res.body) return res;
    setConnection("live");
    const body = res.body.pipeThrough(new TransformStream({ flush: () => setConnection("reconnecting") }));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  } catch (err) {
    setConnection("reconnecting");
    throw err;
  }
}

async function followElection(): Promise<void> {
  const observer = RemoteLeaseObserver.connect(location.origin, {
    fetch: watchedFetch,
    // Above the stack's 2 s keep-alive: a stalled stream (a paused controller) is dropped soon.
    idleTimeoutMs: 6000,
    maxBackoffMs: 3000,
    initialTimeoutMs: 24 * 3600_000,
    logger: { warn: () => setConnection("reconnecting") },
  });
  for await (const s of observer.watch()) showState(s);
}

setConnection("reconnecting");
void poll();
void followElection();
