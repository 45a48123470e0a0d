package swarmlease_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// controller stands in for an lfp-swarm-lease controller: its GET /v1/events sends the
// current state, a keep-alive and one change, then ends the stream (as a restarting controller
// would). The observer reconnects and gets the same state again, which it does not repeat.
func controller() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: current\n"+
			`data: {"namespace":"demo","exists":true,"acquired":false,"holder_id":"","node_id":"","task_id":"",`+
			`"fence":6,"acquired_at":null,"renewed_at":null,"expires_at":null,"ttl_ms":0}`+"\n\n"+
			": keep-alive\n\n"+
			"event: change\n"+
			`data: {"namespace":"demo","exists":true,"acquired":true,"holder_id":"web-1","node_id":"n1","task_id":"t1",`+
			`"fence":7,"acquired_at":"2030-01-02T03:04:05Z","renewed_at":"2030-01-02T03:04:05Z",`+
			`"expires_at":"2030-01-02T03:04:20Z","ttl_ms":15000}`+"\n\n")
	}))
}

func Example() {
	srv := controller()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	obs := swarmlease.Connect(srv.URL, swarmlease.WithInitialTimeout(5*time.Second))
	for st, err := range obs.Watch(ctx) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if !st.HasHolder() {
			fmt.Printf("%s: no holder (last fence %d)\n", st.Namespace, st.Fence)
			continue
		}
		fmt.Printf("%s: held by %s with fence %d\n", st.Namespace, st.HolderID, st.Fence)
		break // a real observer keeps ranging until ctx ends
	}
	// Output:
	// demo: no holder (last fence 6)
	// demo: held by web-1 with fence 7
}

func ExampleObserver_WaitForHolder() {
	srv := controller()
	defer srv.Close()

	st, err := swarmlease.Connect(srv.URL).WaitForHolder(context.Background(), 10*time.Second)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("leader %s on node %s, fence %d\n", st.HolderID, st.NodeID, st.Fence)
	// Output:
	// leader web-1 on node n1, fence 7
}
