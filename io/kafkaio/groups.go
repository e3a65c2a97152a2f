package kafkaio

import "slices"

// DefaultReaders is the number of groups Plan deals partitions into
// when it is given none: 8, the partition count at which one client per
// partition was measured to read as fast as the machine parses.
const DefaultReaders = 8

// Group is the partitions one reader reads: one element of Read, with one
// franz-go client for all of them, and one restriction that holds an
// offset range per partition.
//
// A thousand partitions, each an element with its own client, cost
// 150-500 s for 1M events where 8 took 1.5 s, 2 GB of memory and up to
// 1,800 broker connections: Prism scheduled a thousand restrictions, and
// each client held a fetch and two connections. A reader's cost is per
// group, whatever the number of partitions in it.
type Group struct {
	// ID numbers the group within its read, from 0.
	ID int32
	// Parts are the group's partitions in ID order, with the range each
	// one reads.
	Parts []Partition
	// Spread changes the element's encoding, and nothing else, so that a
	// runner that keys the read by its element spreads the groups over
	// its subtasks (Plan sets it: see spread).
	Spread int32
}

// deal deals parts into at most readers groups (DefaultReaders when
// readers <= 0), round robin in partition order, so that group sizes
// differ by at most one. A topic with fewer partitions than readers gets
// one group per partition. It returns the groups in ID order, each with its
// partitions in ID order.
func deal(parts []Partition, readers int) []Group {
	if readers <= 0 {
		readers = DefaultReaders
	}
	sorted := slices.Clone(parts)
	slices.SortFunc(sorted, func(a, b Partition) int { return int(a.ID) - int(b.ID) })
	n := min(readers, len(sorted))
	groups := make([]Group, n)
	for i, p := range sorted {
		g := &groups[i%n]
		g.ID = int32(i % n)
		g.Parts = append(g.Parts, p)
	}
	return groups
}
