package elections

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// TestFastEncodeMatchesEncodingJSON: the answers encodeFast writes are byte for byte huma's
// default JSON encoding, and answers with strings that need escaping go to that encoder.
func TestFastEncodeMatchesEncodingJSON(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	leader := ElectionLeader{CandidateID: "worker-a", Term: 1842, ExpiresAt: "2026-11-29T12:00:30.000Z"}
	withMeta := func(m string) ElectionLeader { l := leader; l.Metadata = m; return l }
	fast := 0
	for _, v := range []any{
		CampaignResult{Status: "leader", ElectionID: "room-0001", Leader: leader, LeaderToken: strings.Repeat("A", 43), RenewAfterMS: ms(15000)},
		&CampaignResult{Status: "follower", ElectionID: "room-0001", Leader: withMeta("m"), RetryAfterMS: ms(29876)},
		CampaignResult{Status: "leader", ElectionID: "r", Leader: withMeta(`quote " here`)},
		CampaignResult{Status: "leader", ElectionID: "r", Leader: withMeta(`back\slash`)},
		CampaignResult{Status: "leader", ElectionID: "r", Leader: withMeta("<b>&amp;</b> ~")},
		CampaignResult{Status: "leader", ElectionID: "r", Leader: withMeta("line\nbreak\ttab\x7f")},
		CampaignResult{Status: "leader", ElectionID: "r", Leader: withMeta("é \u2028 \xff")},
		CampaignResult{}, ResignResult{ElectionID: "room-0001", Status: "vacant", PreviousTerm: 1 << 63},
		&ResignResult{}, ElectionStatus{ElectionID: "room-0001", Status: "vacant"},
		&ElectionStatus{ElectionID: "room-0001", Status: "leader", Leader: &leader, RetryAfterMS: 29876},
		ElectionStatus{ElectionID: "room-0001", Status: "leader", Leader: func() *ElectionLeader { l := withMeta("<é>"); return &l }()},
	} {
		var want, got bytes.Buffer
		if err := wire.Marshal(&want, v); err != nil {
			t.Fatal(err)
		}
		if err := Marshal(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%#v:\n got %q\nwant %q", v, got.String(), want.String())
		}
		if _, ok := encodeFast(nil, v); ok {
			fast++
		}
	}
	if fast != 8 {
		t.Errorf("%d answers encoded by hand, want 8 (those whose strings are plain)", fast)
	}
}

// BenchmarkEncodeAnswer: a campaign answer by the API's encoder and by huma's default.
func BenchmarkEncodeAnswer(b *testing.B) {
	ms := int64(15000)
	var v any = CampaignResult{Status: "leader", ElectionID: "room-0001", LeaderToken: strings.Repeat("A", 43), RenewAfterMS: &ms,
		Leader: ElectionLeader{CandidateID: "worker-a", Term: 1842, ExpiresAt: "2026-11-29T12:00:30.000Z"}}
	for _, enc := range []struct {
		name    string
		marshal func(io.Writer, any) error
	}{{"api", Marshal}, {"default", wire.Marshal}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := enc.marshal(io.Discard, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
