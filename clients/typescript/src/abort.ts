// Waiting with an AbortSignal: the one primitive every loop of the client sleeps with.

/** Resolves after ms, or early when signal aborts; resolves true when the full time passed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(true);
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** An AbortController that also aborts, with the same reason, when parent does. */
export function childController(parent?: AbortSignal): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  if (!parent) return { controller, release: () => {} };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, release: () => {} };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return { controller, release: () => parent.removeEventListener("abort", onAbort) };
}

/** The monotonic clock, in ms: deadlines must not move with the wall clock. */
export function now(): number {
  return performance.now();
}

/**
 * Resolves or rejects as promise does, or rejects with signal's reason as soon as it aborts;
 * onLate receives a value that arrives after the abort (to close a response's body).
 *
 * fetch in Node 20 follows a Request's signal through a weak reference, so an abort can be lost
 * once the Request object has been garbage-collected: the client never relies on the abort
 * reaching fetch alone.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal, onLate?: (late: T) => void): Promise<T> {
  const late = () => {
    promise.then((value) => onLate?.(value)).catch(() => {});
  };
  if (signal.aborted) {
    late();
    return Promise.reject(signal.reason);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      late();
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Cancels a response's body that nobody will read, so that its connection is released. */
export function discardBody(response: Response): void {
  response.body?.cancel().catch(() => {});
}
