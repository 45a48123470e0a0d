// The watch of one room's GET /elections/{id}/watch, for watchRoom and hold's follower.
import type { Settings } from "./options.js";
import type { StreamSpec } from "./stream-watch.js";
import type { RoomState } from "./types.js";
import { decodeWatchFrame } from "./wire.js";

/** The spec of a watch of roomId below base; initialTimeoutMs 0: no initial bound. */
export function roomWatchSpec(
  base: string,
  roomId: string,
  settings: Settings,
  initialTimeoutMs: number,
): StreamSpec<RoomState> {
  const url = `${base}/elections/${encodeURIComponent(roomId)}/watch`;
  return {
    url,
    settings,
    initialTimeoutMs,
    server: "a server of the elections API",
    stateEvents: ["state", "message"],
    decode: (data) => decodeWatchFrame(data, roomId),
    same: sameRoomState,
    // An invalid room id, disabled elections or a server without the API stay so however often
    // they are asked.
    endOnPermanentAnswer: true,
    // The server's Retry-After says when its limits let this client in again: earlier only
    // earns another 429.
    capRetryAfter: false,
    // The server ends streams routinely (their lifetime, a lagging client): no warning.
    reconnectLevel: "debug",
    reconnectMessage: "lfp-swarm-lease: room watch ended; reconnecting",
  };
}

/** Whether b shows what a showed: status and leader (candidate, metadata, term, expiry); not the times. */
export function sameRoomState(a: RoomState, b: RoomState): boolean {
  if (a.status !== b.status || (a.leader === null) !== (b.leader === null)) return false;
  if (a.leader === null || b.leader === null) return true;
  return (
    a.leader.candidate_id === b.leader.candidate_id &&
    (a.leader.metadata ?? "") === (b.leader.metadata ?? "") &&
    a.leader.term === b.leader.term &&
    Date.parse(a.leader.expires_at) === Date.parse(b.leader.expires_at)
  );
}
