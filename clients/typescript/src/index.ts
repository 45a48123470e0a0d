// @regbo/lfp-swarm-lease: the typed client of lfp-swarm-lease — the controller API and its event
// stream (RemoteLeaseObserver) and the elections API with hold. Browser-safe: fetch and web
// streams only.

export type { CampaignRequest, CampaignResult, RequestOptions } from "./calls.js";
export { createLeaseClient, LeaseClient, type RoomWatchOptions } from "./client.js";
export {
  InitialTimeoutError,
  LeadershipEndedError,
  type LeadershipEndReason,
  LeaseApiError,
  NoHolderError,
} from "./errors.js";
export type { components, operations, paths } from "./generated/openapi.js";
export { type HoldOptions, Leadership, safetyMarginMs } from "./hold.js";
export { RemoteLeaseObserver, type WatchOptions } from "./observer.js";
export { type ClientOptions, defaults, type Logger } from "./options.js";
export { LeaderToken } from "./token.js";
export * from "./types.js";
