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
