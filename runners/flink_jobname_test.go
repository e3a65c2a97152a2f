package runners

import "testing"

// TestFlinkJobIsShortHex: the Flink job names Beam's job server gives a Beam job.
// The last part is a random int in unpadded hex, so it can be shorter than
// 8 digits (1 in 16 names): such a job must still be recognised, or --async
// waits it out and fails, and a resubmission starts a second job.
func TestFlinkJobIsShortHex(t *testing.T) {
	for _, c := range []struct {
		flink string
		want  bool
	}{
		{"bronze", true},
		{"bronze-root-1201095924-b01cdc8a", true},
		{"bronze-9999-1202002343-788196d", true}, // 7 digits, seen in the pod test
		{"bronze-9999-1202002343-7", true},
		{"bronze-9999-1202002343-788196d01", false}, // 9 digits
		{"bronze-9999-1202002343-", false},
		{"bronze-9999-120200234-788196d", false}, // not MMddHHmmss
		{"bronzer-9999-1202002343-788196d", false},
		{"silver-9999-1202002343-788196d", false},
		{"bronze-x", false},
	} {
		if got := flinkJobIs(c.flink, "bronze"); got != c.want {
			t.Errorf("flinkJobIs(%q, \"bronze\") = %v, want %v", c.flink, got, c.want)
		}
	}
}
