package registryio

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"
)

var header sr.ConfluentHeader

// DecodeWire splits a record value. A value that starts with the magic byte
// 0 is in Confluent's wire format: DecodeWire returns its schema id, the JSON
// after the header, and wire true. Any other value is plain JSON, returned
// as it is. A value of 1 to 4 bytes starting with 0 is ErrBadHeader.
func DecodeWire(v []byte) (id int, payload []byte, wire bool, err error) {
	if len(v) == 0 || v[0] != 0 {
		return 0, v, false, nil
	}
	id, payload, err = header.DecodeID(v)
	if err != nil {
		return 0, nil, true, fmt.Errorf("%w (%d bytes)", ErrBadHeader, len(v))
	}
	return id, payload, true, nil
}

// AppendWire appends the 5-byte wire-format header of schema id to b.
func AppendWire(b []byte, id int) []byte {
	b, _ = header.AppendEncode(b, id, nil)
	return b
}
