package wire_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// plainBodies are bodies around the edges of what decodePlain takes.
var plainBodies = []string{
	`{"candidate_id":"worker-a","ttl_seconds":30}`, `{"leader_token":"` + strings.Repeat("A", 43) + `","ttl_seconds":30}`,
	`{"leader_token":"x"}`, " \t\r\n{ \"leader_token\" :\n\"x\" , \"ttl_seconds\" : null }\r\n ", `{}`, ` { } `,
	`{"candidate_id":"a","metadata":"m <&> ~ !#$%"}`, `{"candidate_id":null,"ttl_seconds":null,"metadata":null}`,
	`{"ttl_seconds":0}`, `{"ttl_seconds":-0}`, `{"ttl_seconds":-5}`, `{"ttl_seconds":30.0}`, `{"ttl_seconds":3e1}`,
	`{"ttl_seconds":3E+1}`, `{"ttl_seconds":300e-1}`, `{"ttl_seconds":2.5}`, `{"ttl_seconds":1e400}`, `{"ttl_seconds":9223372036854775807}`,
	`{"ttl_seconds":01}`, `{"ttl_seconds":-}`, `{"ttl_seconds":1.}`, `{"ttl_seconds":.5}`, `{"ttl_seconds":1e}`, `{"ttl_seconds":1e+}`,
	`{"ttl_seconds":+1}`, `{"ttl_seconds":0x1p3}`, `{"ttl_seconds":1_000}`, `{"ttl_seconds":Infinity}`, `{"ttl_seconds":NaN}`,
	`{"ttl_seconds":30x}`, `{"ttl_seconds":3 0}`, `{"ttl_seconds":"30"}`, `{"ttl_seconds":true}`, `{"ttl_seconds":nul}`,
	`{"ttl_seconds":nullx}`, `{"ttl_seconds":null,}`, `{"candidate_id":"a",}`, `{,}`, `{"candidate_id"}`, `{"candidate_id":}`,
	`{"candidate_id" "a"}`, `{"candidate_id":"a" "metadata":"m"}`, `{"candidate_id":"a"`, `{"candidate_id":"a`, `{"candidate_id`,
	`{`, ``, ` `, `}`, `[]`, `null`, `"a"`, `{"candidate_id":"a"}}`, `{"candidate_id":"a"} {}`, `{"candidate_id":"a"}x`,
	"\f{}", "{}\v", "\u00a0{}", `{"candidate_id":"a","candidate_id":"b"}`, `{"candidate_id":"a","metadata":null,"metadata":"m"}`,
	`{"CANDIDATE_ID":"a"}`, `{"extra":null}`, `{"candidate_id":"a","extra":1}`, `{"candidate\u005fid":"a"}`,
	`{"candidate_id":"a\"b"}`, `{"candidate_id":"a\\b"}`, `{"candidate_id":"\u0041"}`, "{\"candidate_id\":\"a\tb\"}",
	"{\"candidate_id\":\"a\x7f\"}", `{"metadata":"é"}`, "{\"metadata\":\"caf\xe9\"}", `{"candidate_id":["a"]}`,
	`{"candidate_id":{"a":1}}`, `{"candidate_id":true}`, `{"leader_token":5}`, `{"leader_token":"x","candidate_id":"a"}`,
}

// TestPlainDecodeMatchesTokens: whatever decodePlain takes, jsontext's tokens decode alike, into
// every request type; and it takes the bodies clients send.
func TestPlainDecodeMatchesTokens(t *testing.T) {
	taken := map[string]bool{}
	for _, body := range append(plainBodies, strictBodies...) {
		for _, newValue := range []func() wire.FieldDecoder{
			func() wire.FieldDecoder { return &elections.CampaignRequest{} }, func() wire.FieldDecoder { return &elections.RenewRequest{} },
			func() wire.FieldDecoder { return &elections.ResignRequest{} },
		} {
			if checkPlainMatchesTokens(t, []byte(body), newValue) {
				taken[body] = true
			}
		}
	}
	for _, body := range []string{plainBodies[0], plainBodies[1], plainBodies[3], `{"candidate_id":"a","metadata":"m <&> ~ !#$%"}`, `{"ttl_seconds":3E+1}`} {
		if !taken[body] {
			t.Errorf("%q: not taken by decodePlain", body)
		}
	}
}

// FuzzPlainDecodeMatchesTokens is TestPlainDecodeMatchesTokens on arbitrary bodies.
func FuzzPlainDecodeMatchesTokens(f *testing.F) {
	for _, body := range append(plainBodies, strictBodies...) {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newValue := range []func() wire.FieldDecoder{
			func() wire.FieldDecoder { return &elections.CampaignRequest{} }, func() wire.FieldDecoder { return &elections.RenewRequest{} },
			func() wire.FieldDecoder { return &elections.ResignRequest{} },
		} {
			checkPlainMatchesTokens(t, body, newValue)
		}
	})
}

// checkPlainMatchesTokens decodes body both ways and reports whether decodePlain took it.
func checkPlainMatchesTokens(t *testing.T, body []byte, newValue func() wire.FieldDecoder) bool {
	t.Helper()
	plain, tokens := newValue(), newValue()
	if !wire.DecodePlain(body, plain) {
		return false
	}
	if !wire.DecodeTokens(body, tokens) {
		t.Errorf("%q into %T: decodePlain took what jsontext refuses", body, plain)
	} else if !reflect.DeepEqual(plain, tokens) {
		t.Errorf("%q into %T: plain %#v, tokens %#v", body, plain, plain, tokens)
	}
	return true
}

// TestPlainDecodeAllocatesOnlyTheValues: a plain campaign body costs the allocations of what it
// sets — the candidate, the TTL, the metadata (its pointer and text) — and none for reading it.
func TestPlainDecodeAllocatesOnlyTheValues(t *testing.T) {
	body := []byte(`{"candidate_id":"worker-a","ttl_seconds":30,"metadata":"m"}`)
	var r elections.CampaignRequest
	allocs := testing.AllocsPerRun(200, func() {
		if !wire.DecodePlain(body, &r) {
			t.Fatal("not plain")
		}
	})
	if allocs > 4 {
		t.Errorf("decoding a plain campaign body: %.0f allocations, want at most 4", allocs)
	}
}
