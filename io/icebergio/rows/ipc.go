package rows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
)

// Decode appends the rows of stream, an Arrow IPC stream (as snapshot reads
// carry them), to *out, a pointer to a slice of a row struct (see
// SchemaOf); columns are matched by name. members is the JSON text of a map
// from promoted column to the member that fills it (see PromotedMembers),
// "" for none: a row type that lacks such a column folds it into its
// overflow column under the member's name.
func Decode(stream []byte, members string, out any) error {
	pv := reflect.ValueOf(out)
	if pv.Kind() != reflect.Pointer || pv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("%w: Decode wants a pointer to a slice, got %T", ErrRowType, out)
	}
	if len(stream) == 0 {
		return nil
	}
	rt, err := TypeOf(pv.Elem().Type().Elem())
	if err != nil {
		return err
	}
	var m map[string]string
	if members != "" {
		if err := json.Unmarshal([]byte(members), &m); err != nil {
			return fmt.Errorf("%w: SnapshotRows.Members: %v", ErrRowType, err)
		}
	}
	rd, err := ipc.NewReader(bytes.NewReader(stream))
	if err != nil {
		return err
	}
	defer rd.Release()
	for rd.Next() {
		if err := appendRecordFold(pv.Elem(), rt, rd.RecordBatch(), m); err != nil {
			return err
		}
	}
	return rd.Err()
}

// Encode encodes a slice of a row type as an Arrow IPC stream, the form
// Decode reads and snapshot reads emit. It is for tests and tools.
func Encode(rows any) ([]byte, error) {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("%w: EncodeRows wants a slice, got %T", ErrRowType, rows)
	}
	rt, err := TypeOf(v.Type().Elem())
	if err != nil {
		return nil, err
	}
	as, err := table.SchemaToArrowSchema(rt.Schema(), nil, true, false)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	NewAppender(rt, b).AppendSlice(v, 0, v.Len())
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(as))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
