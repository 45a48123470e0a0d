package lease

import (
	"context"
	"errors"
	"time"
)

// Recorder receives the engine's measurements, for metrics (server.Metrics is one). Methods must be cheap and safe for
// concurrent use.
type Recorder interface {
	// Renewed reports one renewal attempt of a leader and how long it took.
	Renewed(took time.Duration, err error)
	// Conflict reports a conditional write that lost to another write (and was retried).
	Conflict()
	// StoreError reports a failed store call by kind (see ErrorKind).
	StoreError(kind string)
	// Leading reports the start (true) and end (false) of a term with its fence.
	Leading(fence uint64, leading bool)
	// TookOver reports a live term of another incarnation taken over: on evidence that its
	// holder is gone (what proved it, from a Witness), or on its expiry (evidence empty).
	TookOver(evidence string)
}

// WithRecorder sets the Recorder of an Election (and of Contenders on it).
func WithRecorder(r Recorder) Option { return func(e *Election) { e.recorder = r } }

// ErrorKind names the class of a store error, for metrics and logs: "not_holder", "corrupt",
// "ambiguous", "unavailable", "not_manager", "no_quorum", "conflicts", "canceled" or "other".
func ErrorKind(err error) string {
	var corrupt *CorruptError
	switch {
	case errors.Is(err, ErrNotHolder):
		return "not_holder"
	case errors.As(err, &corrupt):
		return "corrupt"
	case errors.Is(err, ErrAmbiguous):
		return "ambiguous"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrNotManager):
		return "not_manager"
	case errors.Is(err, ErrNoQuorum):
		return "no_quorum"
	case errors.Is(err, ErrTooManyConflicts):
		return "conflicts"
	case errors.Is(err, ErrStoreFull):
		return "store_full"
	case errors.Is(err, ErrPermission):
		return "permission"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "other"
}

// nopRecorder is the default Recorder.
type nopRecorder struct{}

func (nopRecorder) Renewed(time.Duration, error) {}
func (nopRecorder) Conflict()                    {}
func (nopRecorder) StoreError(string)            {}
func (nopRecorder) Leading(uint64, bool)         {}
func (nopRecorder) TookOver(string)              {}
