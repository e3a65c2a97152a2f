package kafkaio

import "errors"

// Errors returned by this package. Narrower errors wrap these with %w.
var (
	// ErrConfig is returned at construction for a configuration that cannot work.
	ErrConfig = errors.New("kafkaio: bad configuration")

	// ErrUnreachable is returned at construction when no broker answers.
	ErrUnreachable = errors.New("kafkaio: brokers unreachable")

	// ErrNoTopic is returned at construction when the topic does not exist.
	ErrNoTopic = errors.New("kafkaio: topic does not exist")

	// ErrOffsetOutOfRange is returned when a partition's next offset is no
	// longer (or not yet) in the log: retention deleted records that were
	// never read, or the topic was recreated. It is never silently reset.
	ErrOffsetOutOfRange = errors.New("kafkaio: offset out of range")
)
