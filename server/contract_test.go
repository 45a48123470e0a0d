package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"reflect"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// committedContract is the copy the clients are generated from.
const committedContract = "../clients/openapi.json"

// TestContractHasNotDrifted fails when the handlers' contract and the committed copy differ.
func TestContractHasNotDrifted(t *testing.T) {
	generated, err := server.Contract()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(committedContract)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(generated, committed) {
		t.Fatalf("%s differs from the contract the server generates; regenerate it from the repository root:\n"+
			"  go run ./cli/cmd/lfp-swarm-lease openapi > clients/openapi.json", committedContract)
	}
}

// TestServedContractIsTheContract: /openapi.json is the same document.
func TestServedContractIsTheContract(t *testing.T) {
	e, err := lease.New(memstore.New(), "x", lease.Identity{HolderID: "h"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rooms.New(rooms.NewMemoryStore(), "x")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Options{Election: e, Elections: &elections.Options{Rooms: m}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	served, _ := io.ReadAll(resp.Body)
	want, _ := server.Contract()
	var a, b any
	if err := json.Unmarshal(served, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("/openapi.json differs from server.Contract():\n%s", served[:min(len(served), 300)])
	}
}
