package parse_test

import (
	"fmt"

	"github.com/haade/haade/transforms/offsets"
	"github.com/haade/haade/transforms/parse"
)

// A record that is not an event is a dead letter whose error column starts
// with a stable reason: count dead letters by it.
func ExampleSplitError() {
	records := []*offsets.Record{
		{Offset: 1, Value: []byte(`{"source": "news", "title": "Debt market update", "timestamp": "2026-05-19T10:00:00Z"}`)},
		{Offset: 2, Value: []byte(`{"source": "news", "title": "Debt market update"`)},
		{Offset: 3, Value: []byte(`{"source": "news", "title": "Debt market update", "timestamp": "yesterday"}`)},
		{Offset: 4, Null: true},
	}
	for _, rec := range records {
		if _, dl, ok := parse.Row("fintech.debt.raw", 0, rec, rec.Value); !ok {
			reason, _ := parse.SplitError(dl.Error)
			fmt.Println(dl.KafkaOffset, reason)
		}
	}
	fmt.Println(parse.DeadLetterReasons())
	// Output:
	// 2 syntax
	// 3 bad_timestamp
	// 4 tombstone
	// [empty syntax not_object trailing_data wrong_type missing_timestamp bad_timestamp duplicate_member other tombstone unrouted no_key]
}
