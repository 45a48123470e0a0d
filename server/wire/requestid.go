package wire

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
)

type requestIDKey struct{}

// RequestIDHeader is the response header naming the request's ID.
const RequestIDHeader = "X-Request-Id"

// RequestID returns the request's ID ("req_" + 32 hex digits), or "" outside a request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Every request gets a fresh random ID, in the X-Request-Id response header (set by the first
// middleware, before anything else can answer) and, for the router's handlers, in its context. An ID sent
// by the client is not trusted (it would let clients forge log correlation); it is ignored.
//
// An ID correlates an answer with the server's logs; it grants nothing and guards nothing, so
// it needs to be unique, not unpredictable. Its 128 bits come from math/rand/v2's generator
// (the runtime's ChaCha8, seeded from the operating system's randomness, per thread): as
// unlikely to repeat as crypto/rand's, without a read of the kernel's generator on every
// request.

// SetRequestID gives the request answered through w a fresh ID, in its X-Request-Id header,
// and returns it.
func SetRequestID(w http.ResponseWriter) string {
	v := nextRequestID()
	// Set under its canonical key, without Set's canonicalisation.
	w.Header()[RequestIDHeader] = v
	return v[0]
}

// IDs are made idsPerBlock at a time: an ID and the header value holding it were two of a
// request's allocations, and a block makes two for all of its IDs. Each ID is a piece of one
// string, and each header value a slice of one element, and of capacity one, of one []string:
// strings never change, and appending to such a slice (Header.Add) moves it elsewhere, so no
// request sees another's. A block stays reachable while any of its IDs is.
const idsPerBlock = 64

// idLen is an ID's length: "req_" and 32 hex digits.
const idLen = len("req_") + 32

// idBlock is a run of fresh IDs, handed out in order, each once, to whichever request takes
// the next index.
type idBlock struct {
	values []string
	next   atomic.Int64 // the index of the next ID to hand out; past the end when all are out
}

// idBlockInUse is the block IDs are handed out from.
var idBlockInUse atomic.Pointer[idBlock]

// nextRequestID returns a fresh ID as a header value.
func nextRequestID() []string {
	for {
		b := idBlockInUse.Load()
		if b != nil {
			if i := b.next.Add(1) - 1; i < idsPerBlock {
				return b.values[i : i+1 : i+1]
			}
		}
		// Used up: the first request to replace it wins, any other takes from the winner's.
		idBlockInUse.CompareAndSwap(b, newIDBlock())
	}
}

// newIDBlock makes idsPerBlock new IDs.
func newIDBlock() *idBlock {
	buf := make([]byte, 0, idsPerBlock*idLen)
	for range idsPerBlock {
		var r [16]byte
		binary.LittleEndian.PutUint64(r[:8], rand.Uint64())
		binary.LittleEndian.PutUint64(r[8:], rand.Uint64())
		buf = append(buf, "req_"...)
		buf = hex.AppendEncode(buf, r[:])
	}
	ids := string(buf)
	b := &idBlock{values: make([]string, idsPerBlock)}
	for i := range b.values {
		b.values[i] = ids[i*idLen : (i+1)*idLen]
	}
	return b
}

// RequestIDOf is the ID SetRequestID gave the request answered through w. Ahead of the router
// the ID lives in the header alone (CORS sits between them and passes no values), so that the
// elections fast path needs no context of its own.
func RequestIDOf(w http.ResponseWriter) string {
	if ids := w.Header()[RequestIDHeader]; len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// WithRequestID is r with its ID in its context, for RequestID.
func WithRequestID(r *http.Request, id string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
}
