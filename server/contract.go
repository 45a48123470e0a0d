package server

import (
	"encoding/json"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// Contract returns the OpenAPI 3.1 document of the API, generated from the handlers' types:
// the same document a running server serves at /openapi.json. Like New, it needs the API's
// error model installed (wire.InstallErrorModel).
func Contract() ([]byte, error) {
	e, err := lease.New(memstore.New(), "contract", lease.Identity{HolderID: "contract"})
	if err != nil {
		return nil, err
	}
	m, err := rooms.New(rooms.NewMemoryStore(), "contract")
	if err != nil {
		return nil, err
	}
	s, err := New(Options{Election: e, Elections: &elections.Options{Rooms: m}})
	if err != nil {
		return nil, err
	}
	return s.contract()
}

func (s *Server) contract() ([]byte, error) {
	out, err := json.MarshalIndent(s.api.OpenAPI(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
