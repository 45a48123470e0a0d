package elections

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// The elections fast path serves campaign, renew, resign and status ahead of the router: no
// chi route context, no context for the request's ID, no huma input and output reflection, and
// the body read and decoded once, straight into the operation's request. It takes only the
// requests it can answer exactly as huma would — the same status, headers and body — and leaves
// every other to the router untouched: an escaped path, HEAD, a disabled API, an invalid room
// id, an Accept or Content-Type other than the plain JSON ones, Expect, a body of unknown or
// large length, and any body that is not plainly valid (unknown fields, wrong types, fractional
// TTLs, malformed JSON...), so that every refusal keeps its words. A body it read and left is
// handed on as if unread. The checks after the body (budget, engine errors) and the answers are
// the same code huma's handlers run (gate, the operations, fail).
//
// Reading the body before the budget check, where huma checks first, shows nowhere: the body's
// length is known and small, so reading it neither trips the body limit nor, without Expect,
// sends anything; a refused campaign's body would be discarded after the answer anyway.

// FastBodyMax bounds the bodies the fast path reads (and its buffers): well above any plain
// request — a campaign with 1,024 characters of metadata — and below the body limit's default.
// A longer body goes to huma.
const FastBodyMax = 8 << 10

// bodyReadTimeout is how long huma's operations and the fast path wait for a request body.
const bodyReadTimeout = 5 * time.Second

// fastBodies are the fast path's body buffers, FastBodyMax bytes each.
var fastBodies = sync.Pool{New: func() any { b := make([]byte, FastBodyMax); return &b }}

// Answer headers, set under their canonical keys without Set's canonicalisation. They are
// shared and never modified: net/http copies the header when the status is written, and
// nothing appends to these slices in place.
var (
	noStoreHeader = []string{"no-store"}
	jsonHeader    = []string{"application/json"}
)

// fastInput holds the request of whichever operation the fast path serves.
type fastInput struct {
	campaign CampaignRequest
	renew    RenewRequest
	resign   ResignRequest
}

// ServeFast serves r, of the request requestID, if it is one the fast path takes, and reports
// whether it did. When it did not, nothing was written or counted, and body, if not nil, is r's
// body for the router (read and replayed).
func (e *API) ServeFast(w http.ResponseWriter, r *http.Request, requestID string) (served bool, body io.ReadCloser) {
	op, roomID := fastRoute(r)
	if op == "" || !e.plainRequest(r, op, roomID) {
		return false, nil
	}
	var in fastInput
	if op != opStatus {
		if body := readFast(w, r, op, &in); body != nil {
			return false, body
		}
	}
	if !e.gate(w, r, requestID, op, roomID) {
		return true, nil
	}
	ctx := r.Context()
	switch op {
	case opStatus:
		body, fail := e.status(ctx, requestID, roomID)
		writeAnswer(w, &body, fail)
	case opCampaign:
		body, fail := e.campaign(ctx, requestID, roomID, &in.campaign)
		writeAnswer(w, &body, fail)
	case opRenew:
		body, fail := e.renew(ctx, requestID, roomID, &in.renew)
		writeAnswer(w, &body, fail)
	case opResign:
		body, fail := e.resign(ctx, requestID, roomID, &in.resign)
		writeAnswer(w, &body, fail)
	}
	return true, nil
}

// fastRoute is the operation and room of r if r is one of the fast path's routes, as chi would
// route it: the unescaped path (chi routes an escaped one by its raw form) and the exact method.
func fastRoute(r *http.Request) (op electionOp, roomID string) {
	if r.URL.RawPath != "" {
		return "", ""
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/elections/")
	if !ok {
		return "", ""
	}
	roomID, action, nested := strings.Cut(rest, "/")
	switch {
	case r.Method == http.MethodGet && !nested:
		return opStatus, roomID
	case r.Method != http.MethodPost:
		return "", ""
	}
	switch action {
	case "campaign":
		return opCampaign, roomID
	case "renew":
		return opRenew, roomID
	case "resign":
		return opResign, roomID
	}
	return "", ""
}

// plainRequest: r passes the checks of gate that need no state (the API on, a valid room id,
// JSON's canonical Content-Type), asks for JSON as huma answers it by default, and has a body
// the fast path reads whole, without Expect.
func (e *API) plainRequest(r *http.Request, op electionOp, roomID string) bool {
	if e.opts.Disabled || rooms.ValidateRoomID(roomID) != nil {
		return false
	}
	// Header values are read as Get reads them (the first), by their canonical keys.
	if accept := r.Header["Accept"]; len(accept) > 0 && accept[0] != "" && accept[0] != "*/*" && accept[0] != "application/json" {
		return false
	}
	if op == opStatus {
		return true
	}
	ct := r.Header["Content-Type"]
	_, expect := r.Header["Expect"]
	return len(ct) > 0 && ct[0] == "application/json" && !expect && r.ContentLength > 0 && r.ContentLength <= e.fastBodyMax
}

// readFast reads r's body, of the length it announced, and decodes it into op's request in in.
// It returns nil if that body is plainly valid; otherwise a body that yields what was read, then
// the rest of r's body or the error the read stopped at, for huma to read as if first.
func readFast(w http.ResponseWriter, r *http.Request, op electionOp, in *fastInput) io.ReadCloser {
	_ = huma.SetReadDeadline(w, time.Now().Add(bodyReadTimeout)) // as huma does before it reads
	bp := fastBodies.Get().(*[]byte)
	defer fastBodies.Put(bp)
	data := (*bp)[:r.ContentLength]
	var n int
	var err error
	for n < len(data) && err == nil {
		var k int
		k, err = r.Body.Read(data[n:])
		n += k
	}
	if n == len(data) && (err == nil || err == io.EOF) { // the EOF that may come with the last bytes
		err = nil
		if decodeInput(data, op, in) {
			_ = r.Body.Close() // as huma closes a body it read
			return nil
		}
	}
	rest := io.Reader(r.Body)
	if err != nil {
		rest = failedReader{err}
	}
	return replayedBody{io.MultiReader(bytes.NewReader(bytes.Clone(data[:n])), rest), r.Body}
}

// decodeInput decodes data into op's request in in if it is plainly valid: decodeFast takes it
// (huma's decoding takes it alike), and huma's validation of the contract's schema passes, which
// beyond decodeFast's types only wants ttl_seconds to be an integer.
func decodeInput(data []byte, op electionOp, in *fastInput) bool {
	switch op {
	case opCampaign:
		return wire.DecodeFast(data, &in.campaign) && in.campaign.TTLSeconds.integer()
	case opRenew:
		return wire.DecodeFast(data, &in.renew) && in.renew.TTLSeconds.integer()
	case opResign:
		return wire.DecodeFast(data, &in.resign)
	}
	return false
}

// replayedBody is a request body read again: its reader yields what was read and then the rest;
// closing it closes the original.
type replayedBody struct {
	io.Reader
	io.Closer
}

// failedReader repeats the error a read stopped at.
type failedReader struct{ err error }

func (f failedReader) Read([]byte) (int, error) { return 0, f.err }

// writeAnswer writes an operation's outcome as huma writes its handler's: the body with
// Cache-Control: no-store, or the error. The body is encoded as Marshal encodes it, and
// copied only for huma's default encoder, so that it stays on the caller's stack otherwise.
func writeAnswer[T any](w http.ResponseWriter, body *T, fail *wire.ErrorBody) {
	if fail != nil {
		wire.WriteOperationError(w, fail)
		return
	}
	h := w.Header()
	h["Cache-Control"] = noStoreHeader
	h["Content-Type"] = jsonHeader
	w.WriteHeader(http.StatusOK)
	if ok, _ := writeFast(w, body); !ok {
		escaping := *body
		_ = wire.Marshal(w, &escaping)
	}
}
