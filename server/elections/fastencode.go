package elections

import (
	"io"
	"strconv"
	"sync"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// The answers of campaign, renew, resign and status are most of what the elections API writes;
// encoding/json spends a reflection walk and a buffer on each. encodeFast appends them by hand
// — byte for byte what encoding/json's Encoder (HTML escaping off, as huma's JSON format)
// writes, newline included — as long as every string is printable ASCII without a quote or a
// backslash, which encoding/json writes unchanged; any other string (metadata may hold
// anything) sends the answer to encoding/json.

// encodeBuffers are reused answer buffers.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Marshal is the JSON encoder of the server's huma API: the elections answers by hand
// (encodeFast), so that huma writes the fast path's bytes, and anything else as huma's default.
func Marshal(w io.Writer, v any) error {
	if ok, err := writeFast(w, v); ok {
		return err
	}
	return wire.Marshal(w, v)
}

// writeFast writes v's encodeFast encoding to w if it has one, and reports whether it had. It
// keeps no reference to v, which can then stay on its caller's stack.
func writeFast(w io.Writer, v any) (bool, error) {
	bp := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(bp)
	b, ok := encodeFast((*bp)[:0], v)
	if !ok {
		return false, nil
	}
	if cap(b) <= maxPooledAnswer {
		*bp = b
	}
	_, err := w.Write(b)
	return true, err
}

// maxPooledAnswer bounds the buffers kept for reuse: a campaign answer with the longest plain
// metadata fits.
const maxPooledAnswer = 4 << 10

// encodeFast appends v's encoding to b if v is an answer it knows and every string of it is
// plain; ok is false otherwise (b is then to be discarded).
func encodeFast(b []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case *CampaignResult:
		return appendCampaignResult(b, v)
	case CampaignResult:
		return appendCampaignResult(b, &v)
	case *ResignResult:
		return appendResignResult(b, v)
	case ResignResult:
		return appendResignResult(b, &v)
	case *ElectionStatus:
		return appendElectionStatus(b, v)
	case ElectionStatus:
		return appendElectionStatus(b, &v)
	}
	return b, false
}

func appendCampaignResult(b []byte, r *CampaignResult) ([]byte, bool) {
	ok := true
	b = append(b, `{"status":`...)
	b, ok = appendPlain(b, r.Status, ok)
	b = append(b, `,"election_id":`...)
	b, ok = appendPlain(b, r.ElectionID, ok)
	b = append(b, `,"leader":`...)
	b, ok = appendLeader(b, &r.Leader, ok)
	if r.LeaderToken != "" {
		b = append(b, `,"leader_token":`...)
		b, ok = appendPlain(b, r.LeaderToken, ok)
	}
	if r.RenewAfterMS != nil {
		b = append(b, `,"renew_after_ms":`...)
		b = strconv.AppendInt(b, *r.RenewAfterMS, 10)
	}
	if r.RetryAfterMS != nil {
		b = append(b, `,"retry_after_ms":`...)
		b = strconv.AppendInt(b, *r.RetryAfterMS, 10)
	}
	return append(b, "}\n"...), ok
}

func appendResignResult(b []byte, r *ResignResult) ([]byte, bool) {
	ok := true
	b = append(b, `{"election_id":`...)
	b, ok = appendPlain(b, r.ElectionID, ok)
	b = append(b, `,"status":`...)
	b, ok = appendPlain(b, r.Status, ok)
	b = append(b, `,"previous_term":`...)
	b = strconv.AppendUint(b, r.PreviousTerm, 10)
	return append(b, "}\n"...), ok
}

func appendElectionStatus(b []byte, st *ElectionStatus) ([]byte, bool) {
	ok := true
	b = append(b, `{"election_id":`...)
	b, ok = appendPlain(b, st.ElectionID, ok)
	b = append(b, `,"status":`...)
	b, ok = appendPlain(b, st.Status, ok)
	if st.Leader != nil {
		b = append(b, `,"leader":`...)
		b, ok = appendLeader(b, st.Leader, ok)
	}
	b = append(b, `,"retry_after_ms":`...)
	b = strconv.AppendInt(b, st.RetryAfterMS, 10)
	return append(b, "}\n"...), ok
}

func appendLeader(b []byte, l *ElectionLeader, ok bool) ([]byte, bool) {
	b = append(b, `{"candidate_id":`...)
	b, ok = appendPlain(b, l.CandidateID, ok)
	if l.Metadata != "" {
		b = append(b, `,"metadata":`...)
		b, ok = appendPlain(b, l.Metadata, ok)
	}
	b = append(b, `,"term":`...)
	b = strconv.AppendUint(b, l.Term, 10)
	b = append(b, `,"expires_at":`...)
	b, ok = appendPlain(b, l.ExpiresAt, ok)
	return append(b, '}'), ok
}

// appendPlain appends s quoted if it needs no escaping; ok turns false (and stays) otherwise.
func appendPlain(b []byte, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s) && ok; i++ {
		ok = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), ok
}
