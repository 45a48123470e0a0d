package wire_test

import (
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// TestDecodeErrorsNameFieldsNotGoTypes: decoding a body into the request types — the step
// after huma's schema check — words its errors in JSON's terms and names the field.
func TestDecodeErrorsNameFieldsNotGoTypes(t *testing.T) {
	for _, tc := range []struct {
		body string
		into any
		want string
	}{
		{`{"candidate_id":5}`, &elections.CampaignRequest{}, "candidate_id: want a string, not a number"},
		{`{"metadata":{"a":1}}`, &elections.CampaignRequest{}, "metadata: want a string, not an object"},
		{`{"ttl_seconds":"30"}`, &elections.CampaignRequest{}, "ttl_seconds: want an integer"},
		{`{"leader_token":true}`, &elections.RenewRequest{}, "leader_token: want a string, not true or false"},
		{`[1]`, &elections.ResignRequest{}, "the body must be an object, not an array"},
		{`{"ttl_seconds":1e400}`, new(any), "ttl_seconds: the number is out of range"},
		{`{"candidate_id":"a","candidate_id":"b"}`, &elections.CampaignRequest{}, `duplicate key "candidate_id"`},
		{"{\"metadata\":\"\xc3\x28\"}", &elections.CampaignRequest{}, "metadata: malformed JSON: not valid UTF-8"},
		{`{"candidate_id":"\udfff"}`, &elections.CampaignRequest{}, "candidate_id: malformed JSON: not valid UTF-8"},
	} {
		err := wire.Decode([]byte(tc.body), tc.into)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.body, err, tc.want)
			continue
		}
		for _, goism := range []string{"Go ", "struct", "of type", "json:", "Request", "float64", "interface"} {
			if strings.Contains(err.Error(), goism) {
				t.Errorf("%s: the error %q speaks Go (%q)", tc.body, err, goism)
			}
		}
	}
}
