package rows_test

import (
	"fmt"

	"github.com/haade/haade/io/icebergio/rows"
)

// Reading is a row type: the iceberg tags name the columns.
type Reading struct {
	Sensor string   `iceberg:"sensor,required"`
	Value  *float64 `iceberg:"value"`
	At     int64    `iceberg:"at,required,timestamptz"`
}

// Map a row struct to its Iceberg schema, then encode rows as the Arrow IPC
// stream that snapshot reads carry and decode them back.
func Example() {
	sc, err := rows.SchemaOf(Reading{})
	if err != nil {
		panic(err)
	}
	for _, f := range sc.Fields() {
		fmt.Printf("%s %v required=%v\n", f.Name, f.Type, f.Required)
	}
	v := 1.5
	stream, err := rows.Encode([]Reading{{"a", &v, 1_700_000_000_000_000}, {"b", nil, 1_700_000_000_000_001}})
	if err != nil {
		panic(err)
	}
	var back []Reading
	if err := rows.Decode(stream, "", &back); err != nil {
		panic(err)
	}
	fmt.Println(len(back), back[0].Sensor, *back[0].Value, back[1].Value == nil, rows.Day(back[1].At))
	// Output:
	// sensor string required=true
	// value double required=false
	// at timestamptz required=true
	// 2 a 1.5 true 19675
}
