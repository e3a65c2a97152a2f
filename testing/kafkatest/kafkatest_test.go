package kafkatest

import "testing"

// The first keys events cover every key once, and the later ones no other.
func TestSpreadKeys(t *testing.T) {
	tests := []struct {
		name           string
		from, n, keys  int
		want, distinct int
	}{
		{"one run", 0, 700, 700, 700, 700},
		{"less than a run", 0, 300, 700, 300, 300},
		{"two and a half runs", 0, 1750, 700, 1750, 700},
		{"from the middle", 700, 300, 700, 300, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks := SpreadKeys(tt.from, tt.n, tt.keys)
			seen := map[string]bool{}
			for _, k := range ks {
				seen[string(k)] = true
			}
			if len(ks) != tt.want || len(seen) != tt.distinct {
				t.Errorf("%d keys, %d distinct; want %d, %d", len(ks), len(seen), tt.want, tt.distinct)
			}
		})
	}
	// Event i and event i+keys have the same key.
	if a, b := SpreadKeys(5, 1, 700)[0], SpreadKeys(705, 1, 700)[0]; string(a) != string(b) {
		t.Errorf("event 5's key %s, event 705's %s: want the same", a, b)
	}
}
