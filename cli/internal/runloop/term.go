package runloop

import "log/slog"

// Term is one leadership term as the loop sees it, whatever engine won it.
type Term struct {
	// Done is closed when the term ends.
	Done <-chan struct{}
	// Env is what the command learns of its term (<PREFIX>_FENCE, <PREFIX>_HOLDER_ID, …); the
	// loop adds it to its own environment.
	Env []string
	// Log carries the term's identity (namespace or room, holder, fence or term).
	Log *slog.Logger
	// Ended returns the attributes that say why the term ended (at least "reason"), logged when
	// the loop stops the command; nil logs none.
	Ended func() []any
}
