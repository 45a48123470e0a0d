// The room id check the client makes before an id goes into a URL path.

const roomIdPattern = /^[A-Za-z0-9_-]{8,64}$/;

/** Refuses what the server would refuse (invalid_input) with a TypeError, before sending anything. */
export function checkRoomId(id: string): void {
  if (typeof id !== "string" || !roomIdPattern.test(id)) {
    throw new TypeError(
      `lfp-swarm-lease: election id ${JSON.stringify(id)}: want 8 to 64 letters, digits, '_' or '-' (nothing was sent)`,
    );
  }
}
