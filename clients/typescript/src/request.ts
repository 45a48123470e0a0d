// One request of the typed client: bounded by the request timeout and the caller's signal, its
// failures turned into the client's errors.
import { abortable, childController, discardBody } from "./abort.js";
import { LeaseApiError } from "./errors.js";

/** What openapi-fetch answers: data on success, the parsed error body otherwise. */
interface FetchResult<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/**
 * Runs send with a signal that aborts after timeoutMs or with signal, and returns its data.
 * A non-2xx answer throws LeaseApiError; a network failure or the timeout throws an Error
 * naming the operation (never the token: no token is ever part of a URL).
 */
export async function call<D>(
  op: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  send: (signal: AbortSignal) => Promise<FetchResult<D>>,
): Promise<D> {
  const { controller, release } = childController(signal);
  const timeout = new Error(`no answer within the request timeout (${timeoutMs} ms)`);
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
  try {
    let result: FetchResult<D>;
    try {
      result = await abortable(send(controller.signal), controller.signal, (late) => discardBody(late.response));
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const why = controller.signal.reason === timeout ? timeout : error;
      throw new Error(`lfp-swarm-lease: ${op}: ${why instanceof Error ? why.message : String(why)}`, { cause: why });
    }
    if (!result.response.ok) throw await LeaseApiError.fromResponse(result.response, result.error);
    return result.data as D;
  } finally {
    clearTimeout(timer);
    release();
  }
}
