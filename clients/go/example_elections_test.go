package swarmlease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// A leader-only worker: hold the room "nightly-report" on an elections server (for example
// `lfp-swarm-lease serve`), do the work while the term lasts, hand the term back when done.
// Every write carries the term's fence. It needs a server, so it is not run as a
// test; the cli module's tests run the same calls against a real server.
func ExampleClient_Hold() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	el, err := swarmlease.NewClient("http://elect:8080")
	if err != nil {
		log.Fatal(err)
	}
	host, _ := os.Hostname()
	for ctx.Err() == nil {
		l, err := el.Hold(ctx, "nightly-report", swarmlease.CampaignRequest{CandidateID: host, TTL: 15 * time.Second},
			swarmlease.WithStopBefore(2*time.Second)) // the work needs up to 2 s to stop cleanly
		if err != nil {
			if ctx.Err() == nil {
				log.Fatal(err) // an input the server refuses, or elections disabled
			}
			return
		}
		fmt.Println("leading with fence", l.Fence())
		work(l.Context(), l.Fence()) // returns when the term ends
		if _, err := l.Resign(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, swarmlease.ErrLeaseNotCurrent) {
			log.Println("resign:", err)
		}
		fmt.Println("term ended:", l.Cause())
	}
}

// work stands in for the leader's work: it must stop when ctx ends.
func work(ctx context.Context, fence uint64) { <-ctx.Done() }

// Following a room: the current leader, then every change, reconnecting as needed.
func ExampleClient_WatchRoom() {
	el, err := swarmlease.NewClient("http://elect:8080")
	if err != nil {
		log.Fatal(err)
	}
	for st, err := range el.WatchRoom(context.Background(), "nightly-report") {
		if err != nil {
			log.Fatal(err) // no state within the initial timeout, or a refused room id
		}
		if st.Leader == nil {
			fmt.Println("vacant")
			continue
		}
		fmt.Printf("%s leads with term %d\n", st.Leader.CandidateID, st.Leader.Term)
	}
}
