// createLeaseClient: every endpoint of the contract, typed from clients/openapi.json.
import createClient, { type Client } from "openapi-fetch";
import type { CampaignRequest, CampaignResult, RequestOptions, RoomCalls } from "./calls.js";
import { LeaseApiError } from "./errors.js";
import type { paths } from "./generated/openapi.js";
import { type HoldOptions, holdRoom, type Leadership } from "./hold.js";
import { RemoteLeaseObserver, type WatchOptions } from "./observer.js";
import { baseUrlOf, type ClientOptions, type Settings, settings } from "./options.js";
import { call } from "./request.js";
import { checkRoomId } from "./room-id.js";
import { roomWatchSpec } from "./room-watch.js";
import { watchStream } from "./stream-watch.js";
import { LeaderToken } from "./token.js";
import type {
  CampaignAnswer,
  CreatedElection,
  ElectionStatus,
  Health,
  Info,
  ResignResult,
  RoomState,
  State,
} from "./types.js";

/** Options of watchRoom. */
export interface RoomWatchOptions extends WatchOptions {
  /** How long to wait for the first state (default: the client's initialTimeoutMs). */
  initialTimeoutMs?: number;
}

/**
 * A client of one lfp-swarm-lease server: the controller endpoints (healthz, readyz, info,
 * state, and the event stream through `observer()`) and the elections API.
 */
export class LeaseClient implements RoomCalls {
  readonly #base: string;
  readonly #settings: Settings;
  readonly #options: ClientOptions;
  /** The typed openapi-fetch client, for what the methods do not cover. */
  readonly api: Client<paths>;

  /** Use createLeaseClient. */
  constructor(baseUrl: string, options: ClientOptions = {}) {
    this.#base = baseUrlOf(baseUrl);
    this.#settings = settings(options);
    this.#options = options;
    this.api = createClient<paths>({ baseUrl: this.#base, fetch: this.#settings.fetch });
  }

  /** The base URL the client talks to. */
  get baseUrl(): string {
    return this.#base;
  }

  /** GET /healthz: process liveness. */
  healthz(options: RequestOptions = {}): Promise<Health> {
    return this.#call("healthz", options, (signal) => this.api.GET("/healthz", { signal }));
  }

  /** GET /readyz: store readiness; an unready server throws LeaseApiError with status 503. */
  readyz(options: RequestOptions = {}): Promise<Health> {
    return this.#call("readyz", options, (signal) => this.api.GET("/readyz", { signal }));
  }

  /** GET /v1/info: the bound namespace, the process's identity, store and version. */
  info(options: RequestOptions = {}): Promise<Info> {
    return this.#call("info", options, (signal) => this.api.GET("/v1/info", { signal }));
  }

  /** GET /v1/state: the election's current state. */
  state(options: RequestOptions = {}): Promise<State> {
    return this.#call("state", options, (signal) => this.api.GET("/v1/state", { signal }));
  }

  /** An observer of GET /v1/events on this server, with this client's options. */
  observer(): RemoteLeaseObserver {
    return RemoteLeaseObserver.connect(this.#base, this.#options);
  }

  /** POST /elections: a new room id. It stores nothing; a room of one's own choosing works as well. */
  createRoom(options: RequestOptions = {}): Promise<CreatedElection> {
    return this.#call("create", options, (signal) => this.api.POST("/elections", { signal }));
  }

  /**
   * POST /elections/{id}/campaign, once: a vacant room makes the caller the leader of a new
   * term, with a token; otherwise a follower's answer names the leader and when to retry.
   */
  async campaign(roomId: string, request: CampaignRequest, options: RequestOptions = {}): Promise<CampaignResult> {
    checkRoomId(roomId);
    const answer = await this.#call("campaign", options, (signal) =>
      this.api.POST("/elections/{id}/campaign", {
        params: { path: { id: roomId } },
        body: { candidate_id: request.candidateId, ttl_seconds: request.ttlSeconds, metadata: request.metadata },
        signal,
      }),
    );
    return wrapToken("campaign", answer);
  }

  /**
   * POST /elections/{id}/renew: extends the token's term for ttlSeconds from now (default: the
   * server's 30, not the campaign's TTL). A term that is over throws LeaseApiError
   * `lease_not_current` (404: vacant or expired; 400: another term holds the room).
   */
  async renew(
    roomId: string,
    token: LeaderToken | string,
    ttlSeconds?: number,
    options: RequestOptions = {},
  ): Promise<CampaignResult> {
    checkRoomId(roomId);
    const answer = await this.#call("renew", options, (signal) =>
      this.api.POST("/elections/{id}/renew", {
        params: { path: { id: roomId } },
        body: { leader_token: reveal(token), ttl_seconds: ttlSeconds },
        signal,
      }),
    );
    return wrapToken("renew", answer);
  }

  /** POST /elections/{id}/resign: ends the token's term at once; the room is vacant, its next term higher. */
  resign(roomId: string, token: LeaderToken | string, options: RequestOptions = {}): Promise<ResignResult> {
    checkRoomId(roomId);
    return this.#call("resign", options, (signal) =>
      this.api.POST("/elections/{id}/resign", {
        params: { path: { id: roomId } },
        body: { leader_token: reveal(token) },
        signal,
      }),
    );
  }

  /** GET /elections/{id}: the room's leader (never the token); a room nobody campaigned in is vacant. */
  async status(roomId: string, options: RequestOptions = {}): Promise<RoomState> {
    checkRoomId(roomId);
    const status: ElectionStatus = await this.#call("status", options, (signal) =>
      this.api.GET("/elections/{id}", { params: { path: { id: roomId } }, signal }),
    );
    return { ...status, leader: status.leader ?? null };
  }

  /**
   * The states of a room from GET /elections/{id}/watch: the current state, then every change
   * of leader, term, metadata or expiry (a renewal moves the expiry); a frame equal to the one
   * before (a reconnect's snapshot) yields nothing. The server ends streams routinely, so it
   * reconnects after a jittered back-off, or the server's Retry-After when longer. Without a
   * first state within the initial timeout it throws InitialTimeoutError; an answer retrying
   * cannot change (an invalid room, disabled elections) throws LeaseApiError at once. It ends
   * without an error when options.signal aborts.
   */
  watchRoom(roomId: string, options: RoomWatchOptions = {}): AsyncGenerator<RoomState, void, undefined> {
    checkRoomId(roomId);
    const initial = options.initialTimeoutMs ?? this.#settings.initialTimeoutMs;
    return watchStream(roomWatchSpec(this.#base, roomId, this.#settings, initial), options.signal);
  }

  /**
   * Campaigns in the room until it wins, then keeps the term renewed in the background and
   * resolves with the Leadership; see HoldOptions for onLeader, onLost and the safety deadline.
   */
  hold(roomId: string, candidateId: string, options: HoldOptions = {}): Promise<Leadership> {
    return holdRoom(this, this.#settings, roomId, candidateId, options);
  }

  #call<D>(
    op: string,
    options: RequestOptions,
    send: (signal: AbortSignal) => Promise<{ data?: D; error?: unknown; response: Response }>,
  ): Promise<D> {
    return call(op, this.#settings.requestTimeoutMs, options.signal, send);
  }
}

/** A client of the server at baseUrl ("http://elect:8080"; a path prefix of a reverse proxy is kept). */
export function createLeaseClient(baseUrl: string, options?: ClientOptions): LeaseClient {
  return new LeaseClient(baseUrl, options);
}

function reveal(token: LeaderToken | string): string {
  return typeof token === "string" ? token : token.reveal();
}

function wrapToken(op: string, answer: CampaignAnswer): CampaignResult {
  const { leader_token: token, ...rest } = answer;
  if (answer.status === "leader" && !token) {
    throw new LeaseApiError({ status: 200, message: `${op}: a leader answer without a leader token` });
  }
  return token ? { ...rest, leader_token: new LeaderToken(token) } : rest;
}
