// hold: campaigns until it wins, then keeps the term renewed and ends it — before its safety
// deadline — when renewals stop succeeding.
import { childController, now, sleep } from "./abort.js";
import { Backoff, safeJitter } from "./backoff.js";
import type { RoomCalls } from "./calls.js";
import { LeadershipEndedError, LeaseApiError } from "./errors.js";
import type { Settings } from "./options.js";
import { checkRoomId } from "./room-id.js";
import { roomWatchSpec } from "./room-watch.js";
import { watchStream } from "./stream-watch.js";
import type { LeaderToken } from "./token.js";
import type { ElectionLeader } from "./types.js";

/** Options of hold. Durations are in milliseconds unless named in seconds. */
export interface HoldOptions {
  /** The lease duration: whole seconds from 5 to 300 (default 30). */
  ttlSeconds?: number;
  /** Shown to everyone who reads the room (at most 1024 characters). */
  metadata?: string;
  /**
   * Ends the term this long before its safety deadline when renewals fail, so that the leader's
   * work has stopped by the deadline (default 0).
   */
  stopBeforeMs?: number;
  /**
   * How often the leader renews, from the start of the last confirmed request (default: a third
   * of the TTL, sooner than the server's renew_after_ms of half, so that slow answers and a few
   * retries still fit). Each wait is shortened by up to a fifth at random.
   */
  renewIntervalMs?: number;
  /**
   * Called once the term is won. Run the leader's work under `leadership.signal`: it aborts when
   * the term ends, at the latest stopBeforeMs before the safety deadline. A rejection is logged.
   */
  onLeader?: (leadership: Leadership) => void | Promise<void>;
  /** Called once when the term ends other than by resign(), with the cause (a LeadershipEndedError). */
  onLost?: (cause: LeadershipEndedError) => void;
  /** Stops campaigning (hold rejects with the reason); after the win, ends the term ("aborted"). */
  signal?: AbortSignal;
}

/** The TTL's safety margin: a tenth, at most 2 s. It absorbs clock-rate differences with the server. */
export function safetyMarginMs(ttlMs: number): number {
  return Math.min(ttlMs / 10, 2000);
}

/** A follower told to retry "now" (its leader's lease is just ending) must not campaign in a tight loop. */
const minFollowerWaitMs = 20;

/** The implementation of LeaseClient.hold. */
export async function holdRoom(
  client: RoomCalls,
  settings: Settings,
  roomId: string,
  candidateId: string,
  options: HoldOptions,
): Promise<Leadership> {
  checkRoomId(roomId);
  const ttlSeconds = options.ttlSeconds ?? 30;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 5 || ttlSeconds > 300) {
    throw new RangeError(
      `lfp-swarm-lease: hold: ttlSeconds ${ttlSeconds}: want a whole number of seconds from 5 to 300`,
    );
  }
  const ttlMs = ttlSeconds * 1000;
  const windowMs = ttlMs - safetyMarginMs(ttlMs);
  const stopBeforeMs = options.stopBeforeMs ?? 0;
  const intervalMs = options.renewIntervalMs ?? ttlMs / 3;
  if (!(stopBeforeMs >= 0) || !(intervalMs > 0)) {
    throw new RangeError("lfp-swarm-lease: hold: stopBeforeMs must be 0 or more and renewIntervalMs positive");
  }
  if (intervalMs + stopBeforeMs >= windowMs) {
    throw new RangeError(
      `lfp-swarm-lease: hold: renewIntervalMs (${intervalMs}) plus stopBeforeMs (${stopBeforeMs}) must be below the TTL minus its safety margin (${windowMs}): lower them or raise ttlSeconds`,
    );
  }
  const signal = options.signal;
  const log = settings.logger;
  const backoff = new Backoff(settings.minBackoffMs, settings.maxBackoffMs, settings.jitter);
  let vacancy: VacancyWatch | undefined;
  let followed = "";
  let lastFailure = "";
  try {
    for (;;) {
      // A vacancy seen before this campaign is answered by the campaign itself; one seen after
      // it (even before the answer arrives) must still wake the follower.
      vacancy?.drain();
      const start = now();
      let result: Awaited<ReturnType<RoomCalls["campaign"]>>;
      try {
        result = await client.campaign(roomId, { candidateId, ttlSeconds, metadata: options.metadata }, { signal });
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (error instanceof LeaseApiError && !error.temporary) throw error;
        let delay = backoff.next();
        if (error instanceof LeaseApiError && error.retryAfterMs > delay) {
          // A rate or capacity limit: the server says when. Up to a fifth more at random, so
          // that the clients it refused together do not all come back together.
          delay = error.retryAfterMs * (1 + safeJitter(settings.jitter) / 5);
        }
        if (String(error) !== lastFailure) {
          log.warn("lfp-swarm-lease: campaign failed; retrying", {
            electionId: roomId,
            error: String(error),
            delayMs: Math.round(delay),
          });
          lastFailure = String(error);
        }
        if (!(await sleep(delay, signal))) throw signal?.reason;
        continue;
      }
      if (signal?.aborted) {
        if (result.leader_token) {
          // Won while being aborted: hand the term back rather than leave it to expire.
          await client.resign(roomId, result.leader_token).catch(() => {});
        }
        throw signal.reason;
      }
      backoff.reset();
      lastFailure = "";
      if (result.status === "leader" && result.leader_token) {
        const leadership = new Leadership(client, settings, roomId, result.leader_token, result.leader, {
          start,
          ttlSeconds,
          windowMs,
          stopBeforeMs,
          intervalMs,
          onLost: options.onLost,
          signal,
        });
        if (options.onLeader) {
          try {
            Promise.resolve(options.onLeader(leadership)).catch((error) =>
              log.warn("lfp-swarm-lease: onLeader failed", {
                electionId: roomId,
                term: leadership.fence,
                error: String(error),
              }),
            );
          } catch (error) {
            log.warn("lfp-swarm-lease: onLeader failed", {
              electionId: roomId,
              term: leadership.fence,
              error: String(error),
            });
          }
        }
        return leadership;
      }
      const leaderKey = `${result.leader.candidate_id}/${result.leader.term}`;
      if (leaderKey !== followed) {
        log.info?.("lfp-swarm-lease: following", {
          electionId: roomId,
          leaderCandidateId: result.leader.candidate_id,
          term: result.leader.term,
          retryAfterMs: result.retry_after_ms,
        });
        followed = leaderKey;
      }
      vacancy ??= new VacancyWatch(roomWatchSpec(client.baseUrl, roomId, settings, 0), signal);
      await vacancy.wait(Math.max(result.retry_after_ms ?? 0, minFollowerWaitMs), signal);
      if (signal?.aborted) throw signal.reason;
    }
  } finally {
    await vacancy?.stop();
  }
}

/**
 * Follows a room's watch stream while hold is a follower, and wakes it when the room is vacant.
 * Its failures are not errors: the follower's timer still bounds each wait.
 */
class VacancyWatch {
  readonly #controller: AbortController;
  readonly #release: () => void;
  readonly #done: Promise<void>;
  #seen = false;
  #wake: (() => void) | undefined;

  constructor(spec: ReturnType<typeof roomWatchSpec>, signal?: AbortSignal) {
    const { controller, release } = childController(signal);
    this.#controller = controller;
    this.#release = release;
    this.#done = (async () => {
      try {
        for await (const state of watchStream(spec, controller.signal)) {
          if (state.status === "vacant") {
            this.#seen = true;
            this.#wake?.();
          }
        }
      } catch {
        // The timer bounds the wait without the watch.
      }
    })();
  }

  /** Forgets a vacancy seen so far. */
  drain(): void {
    this.#seen = false;
  }

  /** Waits ms, or until a vacancy is seen (at once if one was since drain), or the signal aborts. */
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#seen) return;
    const { controller, release } = childController(signal);
    this.#wake = () => controller.abort();
    try {
      await sleep(ms, controller.signal);
    } finally {
      this.#wake = undefined;
      release();
    }
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    this.#release();
    await this.#done;
  }
}

/** What a Leadership is started with. */
interface TermSettings {
  /** When (monotonic ms) the winning campaign started. */
  start: number;
  ttlSeconds: number;
  windowMs: number;
  stopBeforeMs: number;
  intervalMs: number;
  onLost: HoldOptions["onLost"];
  signal: AbortSignal | undefined;
}

/**
 * One term won by hold, alive until `signal` aborts; `cause` then tells why. Nothing it shows —
 * toString, JSON.stringify, util.inspect — contains the token; resign() uses it.
 */
export class Leadership {
  /** The room the term is of. */
  readonly roomId: string;
  /**
   * The term's fence — the number the elections API calls the term (`leader.term`): strictly
   * increasing within the room, never reused. Hand it to every resource the leader writes to.
   */
  readonly fence: number;
  /** Aborts when the term ends (its reason is the cause): run the leader's work under it. */
  readonly signal: AbortSignal;
  /** Resolves with the cause when the term ends. */
  readonly done: Promise<LeadershipEndedError>;

  readonly #client: RoomCalls;
  readonly #settings: Settings;
  readonly #token: LeaderToken;
  readonly #term: TermSettings;
  readonly #controller = new AbortController();
  readonly #releaseParent: () => void;
  #resolveDone!: (cause: LeadershipEndedError) => void;
  #leader: ElectionLeader;
  #deadline: number;
  #stopTimer: ReturnType<typeof setTimeout> | undefined;
  #renewing: Promise<void>;
  #resigned: Promise<number> | undefined;

  /** Use LeaseClient.hold. */
  constructor(
    client: RoomCalls,
    settings: Settings,
    roomId: string,
    token: LeaderToken,
    leader: ElectionLeader,
    term: TermSettings,
  ) {
    this.#client = client;
    this.#settings = settings;
    this.roomId = roomId;
    this.#token = token;
    this.fence = leader.term;
    this.#leader = leader;
    this.#term = term;
    this.signal = this.#controller.signal;
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    this.#deadline = term.start + term.windowMs;
    this.#armStop();
    const parent = term.signal;
    const onAbort = () =>
      this.#end(new LeadershipEndedError("aborted", "hold's signal aborted", { cause: parent?.reason }));
    parent?.addEventListener("abort", onAbort, { once: true });
    this.#releaseParent = () => parent?.removeEventListener("abort", onAbort);
    this.#renewing = this.#keepRenewed();
  }

  /** The term as the server last answered it (the winning campaign, then each renewal). */
  get leader(): ElectionLeader {
    return this.#leader;
  }

  /**
   * The safety deadline on the performance.now() clock: the start of the last successful
   * request plus the TTL minus its safety margin. Unless a renewal succeeds first, the term ends
   * stopBeforeMs before it.
   */
  get deadline(): number {
    return this.#deadline;
  }

  /** Why the term ended; undefined while it lasts. */
  get cause(): LeadershipEndedError | undefined {
    return this.signal.aborted ? (this.signal.reason as LeadershipEndedError) : undefined;
  }

  /**
   * Ends the term — renewals stop at once — and tells the server, so that a follower wins the
   * room without waiting for the lease to expire; resolves with the term that ended. After a
   * loss there is nothing to resign: it resolves 0 without a request. Only the first call sends
   * anything; later calls return its result.
   */
  resign(options: { signal?: AbortSignal } = {}): Promise<number> {
    this.#resigned ??= (async () => {
      const before = this.cause;
      this.#end(new LeadershipEndedError("resigned", "resign() was called"));
      await this.#renewing; // no renewal races the resignation
      if (before?.reason === "lost") return 0;
      const result = await this.#client.resign(this.roomId, this.#token, options);
      return result.previous_term;
    })();
    return this.#resigned;
  }

  /** Room, term and time to the deadline; never the token. */
  toString(): string {
    return `leadership of room ${this.roomId}, term ${this.fence}, deadline in ${Math.round(this.#deadline - now())} ms`;
  }

  /** The room, term and leader; never the token. */
  toJSON(): { roomId: string; term: number; leader: ElectionLeader; ended: string | null } {
    return { roomId: this.roomId, term: this.fence, leader: this.#leader, ended: this.cause?.reason ?? null };
  }

  /** util.inspect (console.log) shows toString. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Leadership { ${this.toString()} }`;
  }

  #armStop(): void {
    clearTimeout(this.#stopTimer);
    this.#stopTimer = setTimeout(
      () =>
        this.#end(
          new LeadershipEndedError(
            "deadline",
            "the safety deadline came without a successful renewal; the room may be taken over",
          ),
        ),
      this.#deadline - this.#term.stopBeforeMs - now(),
    );
  }

  #end(cause: LeadershipEndedError): void {
    if (this.signal.aborted) return;
    clearTimeout(this.#stopTimer);
    this.#releaseParent();
    this.#controller.abort(cause);
    this.#resolveDone(cause);
    if (cause.reason !== "resigned" && this.#term.onLost) {
      try {
        this.#term.onLost(cause);
      } catch (error) {
        this.#settings.logger.warn("lfp-swarm-lease: onLost failed", { electionId: this.roomId, error: String(error) });
      }
    }
  }

  /**
   * Renews every interval (less up to a fifth at random) until the term ends, retrying failures
   * with back-off until the deadline does. Renewals are timed from the start of the last
   * confirmed request — the point the deadline is measured from — not from its answer: a slow
   * server then eats into the slack once, not twice.
   */
  async #keepRenewed(): Promise<void> {
    const s = this.#settings;
    const { intervalMs, windowMs, stopBeforeMs, ttlSeconds } = this.#term;
    const log = s.logger;
    const jittered = () => intervalMs - (intervalMs / 5) * safeJitter(s.jitter);
    // Failed renewals are retried well within the interval: a few tries fit before the deadline.
    const backoff = new Backoff(
      s.minBackoffMs,
      Math.max(s.minBackoffMs, Math.min(s.maxBackoffMs, intervalMs / 4)),
      s.jitter,
    );
    let waitMs = this.#term.start + jittered() - now();
    let failing = false;
    for (;;) {
      if (!(await sleep(waitMs, this.signal))) return;
      const start = now();
      // No attempt outlives the term: past its end, a success could not extend it.
      const { controller, release } = childController(this.signal);
      const cutoff = setTimeout(
        () => controller.abort(new Error("the term's deadline")),
        this.#deadline - stopBeforeMs - now(),
      );
      let result: Awaited<ReturnType<RoomCalls["renew"]>> | undefined;
      let failure: unknown;
      try {
        result = await this.#client.renew(this.roomId, this.#token, ttlSeconds, { signal: controller.signal });
      } catch (error) {
        failure = error;
      } finally {
        clearTimeout(cutoff);
        release();
      }
      if (this.signal.aborted) return;
      if (result) {
        if (result.status !== "leader" || result.leader.term !== this.fence) {
          // A renewal always answers leader with the same term; anything else is not this term.
          this.#end(
            new LeadershipEndedError("lost", `the renewal answered ${result.status} with term ${result.leader.term}`),
          );
          return;
        }
        this.#leader = result.leader;
        this.#deadline = start + windowMs;
        this.#armStop();
        if (failing)
          log.info?.("lfp-swarm-lease: renewed after failures", { electionId: this.roomId, term: this.fence });
        failing = false;
        backoff.reset();
        waitMs = start + jittered() - now();
      } else if (failure instanceof LeaseApiError && (failure.leaseNotCurrent || !failure.temporary)) {
        this.#end(new LeadershipEndedError("lost", failure.message, { cause: failure }));
        return;
      } else {
        if (!failing) {
          log.warn("lfp-swarm-lease: renewal failed; retrying until the deadline", {
            electionId: this.roomId,
            term: this.fence,
            error: String(failure),
            deadlineInMs: Math.round(this.#deadline - now()),
          });
        }
        failing = true;
        waitMs = backoff.next();
      }
    }
  }
}
