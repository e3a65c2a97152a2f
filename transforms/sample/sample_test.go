package sample

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestGeneratorUTCWritesNoOffsets(t *testing.T) {
	for _, utc := range []bool{false, true} {
		g := NewGenerator(7, 0, nil)
		g.UTC = utc
		offsets := 0
		for range 1000 {
			v, _ := g.Next()
			var e struct{ Timestamp string }
			if err := json.Unmarshal(v, &e); err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			if _, off := ts.Zone(); off != 0 || !bytes.HasSuffix([]byte(e.Timestamp), []byte("Z")) {
				offsets++
			}
		}
		if utc && offsets != 0 {
			t.Errorf("UTC: %d of 1000 timestamps have an offset", offsets)
		}
		if !utc && (offsets < 50 || offsets > 150) {
			t.Errorf("default: %d of 1000 timestamps have an offset, want about 100", offsets)
		}
	}
}
