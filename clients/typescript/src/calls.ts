// The requests of the elections API that hold makes, and their types: LeaseClient implements
// RoomCalls, and hold depends on this interface, not on the client that implements it.
import type { LeaderToken } from "./token.js";
import type { CampaignAnswer, ResignResult } from "./types.js";

/** Options of one request. */
export interface RequestOptions {
  /** Aborts the request; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What a candidate campaigns with. */
export interface CampaignRequest {
  /** 1 to 64 of [A-Za-z0-9._:@-]; several candidates may share one (the token identifies a term). */
  candidateId: string;
  /** The lease duration, whole seconds from 5 to 300 (default: the server's 30). */
  ttlSeconds?: number;
  /** At most 1024 characters, shown to everyone who reads the room. */
  metadata?: string;
}

/** A campaign's or renewal's answer, with the leader token wrapped so that it never prints. */
export type CampaignResult = Omit<CampaignAnswer, "leader_token"> & {
  /** The term's token, for leaders only. */
  leader_token?: LeaderToken;
};

/** The calls of the elections API that a holder makes: LeaseClient's. */
export interface RoomCalls {
  /** The server's base URL, for the room's watch stream. */
  readonly baseUrl: string;
  campaign(roomId: string, request: CampaignRequest, options?: RequestOptions): Promise<CampaignResult>;
  renew(
    roomId: string,
    token: LeaderToken | string,
    ttlSeconds?: number,
    options?: RequestOptions,
  ): Promise<CampaignResult>;
  resign(roomId: string, token: LeaderToken | string, options?: RequestOptions): Promise<ResignResult>;
}
