// The wire types of the contract, under the names the client's API uses. Every one is an alias
// of a type generated from clients/openapi.json, so they cannot drift from the server.
import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

/** The election as a controller observes it: GET /v1/state and every event of GET /v1/events. */
export type State = Schemas["State"];
/** This process's identity and binding: GET /v1/info. */
export type Info = Schemas["InfoBody"];
/** The answer of GET /healthz and GET /readyz. */
export type Health = Schemas["HealthBody"];
/** The server's one error body. */
export type ErrorBody = Schemas["ErrorBody"];
/** A room created by POST /elections. */
export type CreatedElection = Schemas["CreatedElection"];
/** A room's current term as everyone may see it; it never carries the token. */
export type ElectionLeader = Schemas["ElectionLeader"];
/** The wire answer of a campaign or renewal (the client wraps its token: see CampaignResult). */
export type CampaignAnswer = Schemas["CampaignResult"];
/** The answer of POST /elections/{id}/resign. */
export type ResignResult = Schemas["ResignResult"];
/** GET /elections/{id}. */
export type ElectionStatus = Schemas["ElectionStatus"];
/** One frame of GET /elections/{id}/watch. */
export type WatchFrame = Schemas["WatchFrame"];

/**
 * A room as GET /elections/{id} and every frame of its watch stream show it. `leader` is null
 * when the room is vacant; `observed_at` is set on watch frames only.
 */
export type RoomState = Omit<ElectionStatus, "leader"> & {
  leader: ElectionLeader | null;
  observed_at?: string;
};

/** Whether the election has a live holder: an expired or released lease may still name its last one. */
export function hasHolder(state: State): boolean {
  return state.acquired && state.holder_id !== "";
}
