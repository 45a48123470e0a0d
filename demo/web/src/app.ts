// The demo page: follows the election through the npm client (the controller's /v1/events,
// proxied by the demo service) and polls the ledger, so one origin serves everything.
import { RemoteLeaseObserver, type State } from "@regbo/lfp-swarm-lease";

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
  highest?: number;
}

/** GET /api/ledger. */
interface Ledger {
  highest_fence: number;
  counts: { accepted: number; rejected: number };
  accepted: Entry[];
  rejected: Entry[];
}

const shownAccepted = 12;
const shownTransitions = 20;

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

/** A table row of text cells (textContent: nothing from the server is parsed as HTML). */
function row(cells: string[], attrs: Record<string, string> = {}): HTMLTableRowElement {
  const tr = document.createElement("tr");
  for (const [k, v] of Object.entries(attrs)) tr.setAttribute(k, v);
  for (const c of cells) {
    const td = document.createElement("td");
    td.textContent = c;
    td.title = c;
    tr.append(td);
  }
  return tr;
}

let last: State | undefined;

function showState(s: State): void {
  $("holder").textContent = s.holder_id || "— nobody —";
  $("fence").textContent = s.fence ? String(s.fence) : "—";
  $("node").textContent = s.node_id || "—";
  $("task").textContent = s.task_id || "—";
  document.body.dataset.fence = String(s.fence ?? "");
  document.body.dataset.holder = s.holder_id ?? "";
  if (last && last.holder_id === s.holder_id && last.fence === s.fence) return;
  const li = document.createElement("li");
  const what = s.holder_id ? `${s.holder_id} leads with fence ${s.fence}` : `no leader (fence ${s.fence})`;
  // A term's own start when there is one (the store's clock); else when the page saw the change.
  const at = s.holder_id && s.acquired_at ? s.acquired_at : new Date();
  li.textContent = `${time(at)} — ${what}`;
  li.dataset.fence = String(s.fence);
  const list = $("timeline");
  list.prepend(li);
  while (list.children.length > shownTransitions) list.lastElementChild?.remove();
  last = s;
}

function showLedger(l: Ledger): void {
  $("highest").textContent = String(l.highest_fence || "—");
  $("counts").textContent = `${l.counts.accepted} accepted, ${l.counts.rejected} rejected`;
  $("accepted").replaceChildren(
    ...l.accepted
      .slice(0, shownAccepted)
      .map((e) =>
        row([String(e.seq), time(e.received_at), String(e.fence), e.holder], { "data-fence": String(e.fence) }),
      ),
  );
  $("rejected").replaceChildren(
    ...l.rejected.map((e) =>
      row([String(e.seq), time(e.received_at), String(e.fence), String(e.highest ?? ""), e.holder], {
        class: "stale",
        "data-fence": String(e.fence),
      }),
    ),
  );
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

async function pollLedger(): Promise<never> {
  for (;;) {
    try {
      const res = await fetch("/api/ledger", { cache: "no-store" });
      if (res.ok) showLedger((await res.json()) as Ledger);
    } catch {
      // The demo service is restarting: the next poll shows it again.
    }
    await new Promise((r) => setTimeout(r, 1000));
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
void pollLedger();
void followElection();
