package rows

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// scratch holds one column's cells of a slice of rows, gathered for one
// bulk append (Arrow's AppendValues): a builder's per-value Append reserves,
// checks and sets its bitmap for every cell, the bulk one once per column.
type scratch struct {
	strs  []string
	bins  [][]byte
	i64   []int64
	i32   []int32
	f64   []float64
	bools []bool
	valid []bool
}

// grown returns s resliced to n, grown when it is shorter.
func grown[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// appendColumn appends column c of the n rows at base (rows of a.size
// bytes) to fb, the column's builder.
func (a *Appender) appendColumn(fb array.Builder, c column, base unsafe.Pointer, n int) {
	s := &a.scratch
	s.valid = grown(s.valid, n)
	col := colCells{p: unsafe.Add(base, c.offset), stride: a.size, pointer: c.pointer, n: n}
	var nulls int
	// valid is nil when every cell is valid: Arrow then sets the bitmap in
	// one step.
	valid := func() []bool {
		if nulls == 0 {
			return nil
		}
		return s.valid
	}
	switch b := fb.(type) {
	case *array.StringBuilder:
		s.strs, nulls = gather(s.strs, s.valid, col)
		size := 0
		for _, v := range s.strs {
			size += len(v)
		}
		reserveData(b.BinaryBuilder, size)
		b.AppendValues(s.strs, valid())
		clear(s.strs) // hold no row's string past the call
	case *array.BinaryBuilder:
		if c.pointer {
			a.appendCells(fb, c, base, n)
			return
		}
		// A []byte is null when nil.
		s.bins, _ = gather(s.bins, s.valid, col)
		size := 0
		for r, v := range s.bins {
			s.valid[r] = v != nil
			if v == nil {
				nulls++
			}
			size += len(v)
		}
		reserveData(b, size)
		b.AppendValues(s.bins, valid())
		clear(s.bins)
	case *array.Int64Builder:
		s.i64, nulls = gather(s.i64, s.valid, col)
		b.AppendValues(s.i64, valid())
	case *array.TimestampBuilder:
		s.i64, nulls = gather(s.i64, s.valid, col)
		b.AppendValues(unsafe.Slice((*arrow.Timestamp)(unsafe.Pointer(unsafe.SliceData(s.i64))), n), valid())
	case *array.Int32Builder:
		s.i32, nulls = gather(s.i32, s.valid, col)
		b.AppendValues(s.i32, valid())
	case *array.Date32Builder:
		s.i32, nulls = gather(s.i32, s.valid, col)
		b.AppendValues(unsafe.Slice((*arrow.Date32)(unsafe.Pointer(unsafe.SliceData(s.i32))), n), valid())
	case *array.Float64Builder:
		s.f64, nulls = gather(s.f64, s.valid, col)
		b.AppendValues(s.f64, valid())
	case *array.BooleanBuilder:
		s.bools, nulls = gather(s.bools, s.valid, col)
		b.AppendValues(s.bools, valid())
	case *array.ListBuilder:
		// A list column that no row fills (Kafka headers, mostly) is one
		// append of nulls.
		for r := range n {
			if unsafe.SliceData(*(*[]byte)(col.at(r))) != nil {
				a.appendCells(fb, c, base, n)
				return
			}
		}
		b.AppendNulls(n)
	default:
		a.appendCells(fb, c, base, n)
	}
}

// reserveData makes room for n more bytes in b's data buffer, doubling it as
// a per-value Append would: Arrow's AppendValues reserves exactly what it
// appends, so a column that a window's buffer fills from many batches
// would be copied whole at every batch.
func reserveData(b *array.BinaryBuilder, n int) {
	if b.DataCap() < b.DataLen()+n {
		b.ReserveData(max(n, b.DataLen()))
	}
}

// appendCells appends column c of the n rows at base one cell at a time.
func (a *Appender) appendCells(fb array.Builder, c column, base unsafe.Pointer, n int) {
	for r := range n {
		appendCell(fb, c, unsafe.Add(base, uintptr(r)*a.size+c.offset))
	}
}

// colCells is one column of n rows: the first row's field at p, the next
// stride bytes further; a pointer field points at the value (nil: null).
type colCells struct {
	p       unsafe.Pointer
	stride  uintptr
	pointer bool
	n       int
}

// at is the address of row r's field. It is computed from the first row's
// for each row, never stepped past the last one: a pointer past the end of
// the rows' allocation is invalid (the race detector's checkptr).
func (c colCells) at(r int) unsafe.Pointer { return unsafe.Add(c.p, uintptr(r)*c.stride) }

// gather reads the n cells of col into buf (grown to n) and, for a pointer
// field, valid; a nil pointer is T's zero value and not valid. It returns
// buf and the number of nil pointers.
func gather[T any](buf []T, valid []bool, col colCells) ([]T, int) {
	buf = grown(buf, col.n)
	if !col.pointer {
		for r := range buf {
			buf[r] = *(*T)(col.at(r))
		}
		return buf, 0
	}
	nulls := 0
	var zero T
	for r := range buf {
		if q := *(*unsafe.Pointer)(col.at(r)); q != nil {
			buf[r], valid[r] = *(*T)(q), true
		} else {
			buf[r], valid[r] = zero, false
			nulls++
		}
	}
	return buf, nulls
}
