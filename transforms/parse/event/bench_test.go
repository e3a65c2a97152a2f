package event

import (
	"encoding/json"
	"testing"
	"time"
)

const sampleEventExtras = `{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00.123456+02:00", "isin": "XS0000000000", "amount": 1.25e6, "tags": ["debt", "eu"], "meta": {"desk": "rates", "urgent": true}}`

func benchParse(b *testing.B, in []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Parse(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkParse measures the parser on the sample event of the README,
// and on one with extra members.
func BenchmarkParse(b *testing.B) {
	b.Run("sample", func(b *testing.B) { benchParse(b, []byte(sampleEvent)) })
	b.Run("extras", func(b *testing.B) { benchParse(b, []byte(sampleEventExtras)) })
	b.Run("malformed", func(b *testing.B) {
		in := []byte(`{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"`)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(in); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}

// stdlibEvent is what encoding/json needs to read the same fields.
type stdlibEvent struct {
	Source    *string `json:"source"`
	Title     *string `json:"title"`
	Timestamp *string `json:"timestamp"`
}

func benchEncodingJSON(b *testing.B, in []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		var e stdlibEvent
		if err := json.Unmarshal(in, &e); err != nil {
			b.Fatal(err)
		}
		t, err := time.Parse(time.RFC3339Nano, *e.Timestamp)
		if err != nil {
			b.Fatal(err)
		}
		_ = t.UnixMicro()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEncodingJSON is the baseline: json.Unmarshal into a struct and
// time.Parse, with none of Parse's checks (duplicates, UTF-8) and the
// extra members dropped rather than kept.
func BenchmarkEncodingJSON(b *testing.B) {
	b.Run("sample", func(b *testing.B) { benchEncodingJSON(b, []byte(sampleEvent)) })
	b.Run("extras", func(b *testing.B) { benchEncodingJSON(b, []byte(sampleEventExtras)) })
}

func BenchmarkParseRFC3339(b *testing.B) {
	in := []byte("2026-05-19T10:00:00.123456789+02:00")
	b.ReportAllocs()
	for b.Loop() {
		if _, why := parseRFC3339(in); why != "" {
			b.Fatal(why)
		}
	}
}
