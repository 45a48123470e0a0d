// Package oneshot holds the lease's one-shot commands — init, try-acquire, renew, release,
// inspect, destroy — each an Options struct, a NewCmdX constructor and an xRun function that
// unit tests drive with a memory store and buffers.
package oneshot
