package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// BenchmarkFastPathCycle measures the fast path's own work for one operation of the throughput
// benchmark's cycle (campaign → renew → renew → resign in one room), through the server's
// handler without net/http's connection, on the memory store (as `serve` runs it). One b.N is one operation.
func BenchmarkFastPathCycle(b *testing.B) {
	m, err := rooms.New(rooms.NewMemoryStore(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(Options{Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	w := &answerWriter{headerWriter: headerWriter{h: http.Header{}}}
	rb := &rewindBody{}
	req := httptest.NewRequest(http.MethodPost, "/elections/"+diffRoom+"/campaign", rb)
	req.Header.Set("Content-Type", "application/json")
	send := func(op string, body []byte) {
		req.URL.Path = "/elections/" + diffRoom + "/" + op
		req.ContentLength = int64(len(body))
		rb.Reset(body)
		clear(w.h)
		w.body.Reset()
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("%s: %d %s", op, w.status, w.body.Bytes())
		}
	}
	campaign := []byte(`{"candidate_id":"c1","ttl_seconds":30}`)
	var renew, resign []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		switch i % 4 {
		case 0:
			send("campaign", campaign)
			token := leaderTokens.FindSubmatch(w.body.Bytes())[1]
			renew = append(append(append(renew[:0], `{"leader_token":"`...), token...), `","ttl_seconds":30}`...)
			resign = append(append(append(resign[:0], `{"leader_token":"`...), token...), `"}`...)
		case 1, 2:
			send("renew", renew)
		case 3:
			send("resign", resign)
		}
	}
}

// answerWriter is a headerWriter that keeps the body too.
type answerWriter struct {
	headerWriter
	body bytes.Buffer
}

func (w *answerWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
