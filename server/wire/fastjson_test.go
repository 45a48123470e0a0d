package wire_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// strictBodies are request bodies of every shape the strict decoder distinguishes.
var strictBodies = []string{
	`{"candidate_id":"worker-a","ttl_seconds":30}`, `{"candidate_id":"a","ttl_seconds":30,"metadata":"m <&> é \u00e9 \n"}`,
	`{"leader_token":"` + strings.Repeat("A", 43) + `","ttl_seconds":30}`, `{"leader_token":"x"}`, ` { "leader_token" : "x" } `,
	`{}`, `{"candidate_id":null,"ttl_seconds":null,"metadata":null}`, `{"ttl_seconds":30.0}`, `{"ttl_seconds":3e1}`,
	`{"ttl_seconds":-5}`, `{"ttl_seconds":2.5}`, `{"ttl_seconds":1e400}`, `{"ttl_seconds":9223372036854775807}`,
	`{"ttl_seconds":"30"}`, `{"candidate_id":5}`, `{"metadata":{"a":[1e400]}}`, `{"metadata":{"a":1}}`, `{"CANDIDATE_ID":"a"}`,
	`{"candidate_id":"a","extra":[1,{"b":null}]}`, `{"candidate_id":"a","candidate_id":"b"}`, "{\"metadata\":\"\xc3\x28\"}",
	`{"candidate_id":"\udfff"}`, `{"candidate_id":"a"} {}`, `{"candidate_id":"a"}x`, `{`, `[]`, `[1,"a",true,null,{}]`, `null`,
	`"a"`, `1`, ``, `{"leader_token":true}`,
}

// TestFastDecodeMatchesStrict: whatever decodeFast takes, it decodes exactly as the strict path
// (jsontext's check, then encoding/json) does, into every request type and into the generic
// value huma validates; what it does not take is left to the strict path.
func TestFastDecodeMatchesStrict(t *testing.T) {
	taken := 0
	for _, body := range strictBodies {
		for _, newValue := range []func() any{
			func() any { return new(any) }, func() any { return &elections.CampaignRequest{} },
			func() any { return &elections.RenewRequest{} }, func() any { return &elections.ResignRequest{} },
		} {
			if checkFastMatchesStrict(t, []byte(body), newValue) {
				taken++
			}
		}
	}
	if taken < 20 {
		t.Errorf("the fast path took %d of the bodies, want at least 20: it is not used", taken)
	}
}

// FuzzFastDecodeMatchesStrict is TestFastDecodeMatchesStrict on arbitrary bodies.
func FuzzFastDecodeMatchesStrict(f *testing.F) {
	for _, body := range strictBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newValue := range []func() any{
			func() any { return new(any) }, func() any { return &elections.CampaignRequest{} },
			func() any { return &elections.RenewRequest{} }, func() any { return &elections.ResignRequest{} },
		} {
			checkFastMatchesStrict(t, body, newValue)
		}
	})
}

// checkFastMatchesStrict decodes body both ways and reports whether the fast path took it.
func checkFastMatchesStrict(t *testing.T, body []byte, newValue func() any) bool {
	t.Helper()
	fast, strict := newValue(), newValue()
	strictErr := wire.CheckJSON(body)
	if strictErr == nil {
		strictErr = json.Unmarshal(body, strict)
	}
	if !wire.DecodeFast(body, fast) {
		return false
	}
	if strictErr != nil {
		t.Errorf("%q into %T: the fast path decoded what the strict path refuses (%v)", body, fast, strictErr)
	} else if !reflect.DeepEqual(fast, strict) {
		t.Errorf("%q into %T: fast %#v, strict %#v", body, fast, fast, strict)
	}
	return true
}

// TestDecodeReadsABodyOnce: a well-formed campaign body costs a handful of allocations — one
// pass of jsontext — not the three passes (jsontext's check, encoding/json, the exact-field
// map) of the strict path.
func TestDecodeReadsABodyOnce(t *testing.T) {
	body := []byte(`{"candidate_id":"worker-a","ttl_seconds":30,"metadata":"m"}`)
	for _, tc := range []struct {
		into func() any
		max  float64
	}{
		{func() any { return &elections.CampaignRequest{} }, 14},
		{func() any { return new(any) }, 18},
	} {
		v := tc.into()
		allocs := testing.AllocsPerRun(200, func() {
			if err := wire.Decode(body, v); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > tc.max {
			t.Errorf("decoding a campaign body into %T: %.0f allocations, want at most %.0f", v, allocs, tc.max)
		}
	}
}
