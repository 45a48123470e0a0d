package serve

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/regbo/lfp-swarm-lease/demo/ledger"
)

// maxWriteBody bounds a write's body: a write is a few hundred bytes.
const maxWriteBody = 4 << 10

// ledgerAPI serves GET /api/ledger (the snapshot) and POST /api/ledger/entries (a write).
type ledgerAPI struct {
	ledger *ledger.Ledger
	log    *slog.Logger
}

func (a ledgerAPI) snapshot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.ledger.Snapshot())
}

// WriteAnswer is the answer to a write: the recorded entry, and for a rejected write why.
type WriteAnswer struct {
	// Entry is the write as recorded; none when nothing was recorded.
	Entry *ledger.Entry `json:"entry,omitempty"`
	// Error explains a rejection; empty when accepted.
	Error string `json:"error,omitempty"`
	// Code names the rejection for programs: stale_fence, fence_not_issued,
	// controller_unreachable, invalid_write, not_recorded, write_address_only.
	Code string `json:"code,omitempty"`
}

// append answers 201 for an accepted write; 409 for a stale one and 422 for one whose fence the
// election has not issued (both recorded as rejected); 400 for a malformed one; 503 when the
// election could not be read to check the fence, and 500 when the write could not be recorded
// (nothing recorded or acknowledged).
func (a ledgerAPI) append(w http.ResponseWriter, r *http.Request) {
	var in ledger.Write
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxWriteBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	if err == nil {
		// One write and nothing after it but white space: trailing data is not guessed at.
		if extra := dec.Decode(&struct{}{}); extra != io.EOF {
			err = errors.New("data after the JSON write")
		}
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, WriteAnswer{Error: "the body must be one JSON write {fence, holder, node, task, written_at} and nothing else: " + err.Error(), Code: "invalid_write"})
		return
	}
	e, err := a.ledger.Append(r.Context(), in)
	switch {
	case errors.Is(err, ledger.ErrInvalidWrite):
		writeJSON(w, http.StatusBadRequest, WriteAnswer{Error: err.Error(), Code: "invalid_write"})
	case errors.Is(err, ledger.ErrElectionUnknown):
		a.log.Warn("write not checked: the controllers cannot be reached", "fence", in.Fence, "holder", in.Holder, "err", err)
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, WriteAnswer{Error: err.Error(), Code: "controller_unreachable"})
	case err != nil:
		a.log.Error("ledger write failed", "err", err)
		writeJSON(w, http.StatusInternalServerError, WriteAnswer{Error: "the write could not be recorded", Code: "not_recorded"})
	case e.Reason == ledger.NotIssued:
		a.log.Warn("write rejected: fence not issued", "fence", e.Fence, "issued", e.Issued, "holder", e.Holder, "task", e.Task)
		writeJSON(w, http.StatusUnprocessableEntity, WriteAnswer{Entry: &e, Error: "fence not issued: above the highest fence the election has issued", Code: "fence_not_issued"})
	case !e.Accepted:
		a.log.Warn("stale write rejected", "fence", e.Fence, "highest", e.Highest, "holder", e.Holder, "task", e.Task)
		writeJSON(w, http.StatusConflict, WriteAnswer{Entry: &e, Error: "stale fence: below the highest accepted fence", Code: "stale_fence"})
	default:
		writeJSON(w, http.StatusCreated, WriteAnswer{Entry: &e})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
