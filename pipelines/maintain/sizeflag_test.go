package main

import "testing"

// --target-file-size takes the sizes it took before go-humanize parsed them.
func TestSizeFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"134217728", 134217728},
		{"128MiB", 128 << 20},
		{"128mib", 128 << 20},
		{" 64 MiB ", 64 << 20},
		{"0.5GB", 500_000_000},
		{"1GiB", 1 << 30},
		{"10KB", 10_000},
		{"10KiB", 10 << 10},
		{"512b", 512},
	} {
		var s sizeFlag
		if err := s.Set(tc.in); err != nil || int64(s) != tc.want {
			t.Errorf("Set(%q) = %d, %v; want %d", tc.in, s, err, tc.want)
		}
	}
	for _, bad := range []string{"", "huge", "-1MiB", "12XB", "2PiB"} {
		var s sizeFlag
		if err := s.Set(bad); err == nil || err.Error() != "want a size such as 134217728, 128MiB or 0.5GB" {
			t.Errorf("Set(%q) = %v, want the size error", bad, err)
		}
	}
}
