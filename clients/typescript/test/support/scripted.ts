// A scripted HTTP server on a loopback socket, for the edge cases a real lfp-swarm-lease server
// does not produce on demand (a stream gone silent, a proxy's answer, a replayed frame).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";

/** A running scripted server. */
export interface Scripted {
  base: string;
  /** When (performance.now()) each request arrived, in order. */
  arrivals: number[];
  close(): Promise<void>;
}

/** Serves handler(request, response, n) for the n-th request (0-based) on 127.0.0.1. */
export async function scripted(
  handler: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<Scripted> {
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    arrivals.push(performance.now());
    handler(req, res, arrivals.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  after(close);
  return { base: `http://127.0.0.1:${port}`, arrivals, close };
}

/** Starts an event stream on res. */
export function eventStream(res: ServerResponse): void {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
  res.flushHeaders();
}

/** A controller State with the given holder and fence. */
export function stateOf(holder: string, fence: number) {
  return {
    namespace: "demo",
    exists: fence > 0,
    acquired: holder !== "",
    holder_id: holder,
    node_id: "",
    task_id: "",
    fence,
    acquired_at: null,
    renewed_at: null,
    expires_at: null,
    ttl_ms: 30000,
  };
}

/** An SSE frame. */
export function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A watch frame of a vacant room. */
export function vacantFrame(room: string) {
  return {
    election_id: room,
    status: "vacant",
    leader: null,
    retry_after_ms: 0,
    observed_at: "2026-01-01T00:00:00Z",
    schema_version: 1,
  };
}
