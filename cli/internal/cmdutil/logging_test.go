package cmdutil

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestLogOptions: json gives one object per line, the level filters, and bad values are usage
// errors naming the flag.
func TestLogOptions(t *testing.T) {
	var buf bytes.Buffer
	log, err := LogOptions{Format: "json", Level: "warn"}.Logger(&buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "fence", 7)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "shown" || line["fence"] != float64(7) {
		t.Fatalf("%v: %s", err, buf.String())
	}
	for _, o := range []LogOptions{{Format: "xml"}, {Level: "loud"}} {
		_, err := o.Logger(&buf)
		if code, _ := Classify(err); code != ExitUsage || !strings.Contains(err.Error(), "--log-") {
			t.Errorf("%+v: exit %d, %v", o, code, err)
		}
	}
}
