package rows

import (
	"reflect"
	"sync"
)

var types sync.Map // reflect.Type -> *Type

// TypeOf returns the parsed row type of struct type t (see the package doc
// on tags), parsed once per process.
func TypeOf(t reflect.Type) (*Type, error) {
	if v, ok := types.Load(t); ok {
		return v.(*Type), nil
	}
	rt, err := rowTypeOf(t)
	if err != nil {
		return nil, err
	}
	types.Store(t, rt)
	return rt, nil
}

// GoType returns the struct type.
func (rt *Type) GoType() reflect.Type { return rt.goType }

// DayColumn finds the required int32 date or int64 timestamp column named
// name: index is its field index in the struct, date is true for a date
// column (days since the epoch) and false for a timestamp (microseconds).
// ok is false when there is no such column.
func (rt *Type) DayColumn(name string) (index []int, date, ok bool) {
	for _, c := range rt.columns {
		if c.name != name || c.pointer || (c.kind != reflect.Int32 && c.kind != reflect.Int64) {
			continue
		}
		for i := 0; i < rt.goType.NumField(); i++ {
			if rt.goType.Field(i).Offset == c.offset {
				return []int{i}, c.kind == reflect.Int32, true
			}
		}
	}
	return nil, false, false
}

// DayMicros is the length of a day in microseconds, the unit of timestamp
// columns.
const DayMicros = int64(24 * 60 * 60 * 1000 * 1000)

// Day returns the day (days since the epoch, UTC) of a timestamp in
// microseconds since the epoch, rounding towards the past.
func Day(micros int64) int64 { return floorDiv(micros, DayMicros) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
