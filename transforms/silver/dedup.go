package silver

import (
	"time"

	"github.com/haade/haade/transforms/tables"
)

// DayMicros is the length of a day in microseconds: an event's day is
// Timestamp / DayMicros.
const DayMicros = int64(24 * time.Hour / time.Microsecond)

// Deduper is the logic of silver's deduplication, without any table: it
// drops a row whose source, title and event timestamp match an earlier
// row ingested at most Horizon before it. Rows must come in bronze order
// (ingestion time), so that the earliest row is the one kept whatever the
// runner. The rows already in the silver table count as earlier: the
// caller loads each event day once, before the first row of that day,
// with Seed (pipelines/silver reads one partition of the table per day).
// A Deduper is not safe for concurrent use.
type Deduper struct {
	horizon int64          // microseconds
	seen    map[key]int64  // ingested_at of the kept row
	days    map[int64]bool // event days seeded into seen
	// newest is the latest ingested_at seen; swept is newest at the last
	// eviction from seen.
	newest, swept int64
}

type key struct {
	source, title string
	ts            int64
}

// NewDeduper returns a Deduper for horizon (default, when <= 0: 24h).
func NewDeduper(horizon time.Duration) *Deduper {
	if horizon <= 0 {
		horizon = 24 * time.Hour
	}
	return &Deduper{horizon: horizon.Microseconds(), seen: map[key]int64{}, days: map[int64]bool{}}
}

// Seeded reports whether the rows of event day (days since the epoch)
// have been given to Seed.
func (d *Deduper) Seeded(day int64) bool { return d.days[day] }

// Seed records the silver rows of one event day that the table already
// holds, so that later rows with their keys are duplicates.
func (d *Deduper) Seed(day int64, rows []tables.SilverEvent) {
	for _, r := range rows {
		k := key{r.Source, r.Title, r.Timestamp}
		if prev, ok := d.seen[k]; !ok || r.IngestedAt < prev {
			d.seen[k] = r.IngestedAt
		}
	}
	d.days[day] = true
}

// Keep reports whether r is kept (not a duplicate), and remembers it.
func (d *Deduper) Keep(r tables.SilverEvent) bool {
	k := key{r.Source, r.Title, r.Timestamp}
	if prev, ok := d.seen[k]; ok && r.IngestedAt-prev <= d.horizon {
		return false
	}
	d.seen[k] = r.IngestedAt
	d.newest = max(d.newest, r.IngestedAt)
	return true
}

// Held is the number of keys held.
func (d *Deduper) Held() int { return len(d.seen) }

// evictSlack is how far before the newest ingested_at a later row may be
// stamped (bronze stamps are per record, and partitions interleave).
const evictSlack = int64(time.Hour / time.Microsecond)

// Evict forgets the keys that no later row can duplicate: those kept more
// than the horizon (and evictSlack) before the newest row, since rows come
// in bronze order. It sweeps once the newest row has moved a quarter of
// the horizon, so a streaming silver holds about 1.25 horizons of keys
// instead of every key since it started. The days stay seeded: a key of a
// seeded day that was evicted is older than the horizon for any later row.
// Call it after each batch.
func (d *Deduper) Evict() {
	if d.newest-d.swept < d.horizon/4 {
		return
	}
	d.swept = d.newest
	oldest := d.newest - d.horizon - evictSlack
	for k, at := range d.seen {
		if at < oldest {
			delete(d.seen, k)
		}
	}
}
