package compaction

import "testing"

func TestShouldCompact_ReserveOrFifteenPercent(t *testing.T) {
	tests := []struct {
		name                     string
		context, window, reserve int
		want                     bool
	}{
		// 15% of 8000 is 1200 > 500: the threshold is 6800.
		{"small window, 15% wins, at boundary", 6800, 8000, 500, false},
		{"small window, 15% wins, one above", 6801, 8000, 500, true},
		{"small window, reserve alone would not compact", 7400, 8000, 500, true},
		// 15% of 100000 is 15000 < 16384: the threshold is 83616.
		{"reserve wins, at boundary", 83616, 100000, 16384, false},
		{"reserve wins, one above", 83617, 100000, 16384, true},
		{"reserve wins, 15% alone would not compact", 84000, 100000, 16384, true},
		// 15% of 1000000 is 150000 > 16384: the threshold is 850000.
		{"large window, 15% wins over default reserve, at boundary", 850000, 1000000, 16384, false},
		{"large window, 15% wins over default reserve, one above", 850001, 1000000, 16384, true},
		// 15% of 1001 is 150.15, rounded up to 151: the threshold is 850.
		{"15% rounds up, at boundary", 850, 1001, 0, false},
		{"15% rounds up, one above", 851, 1001, 0, true},
		{"reserve equal to 15%", 85000, 100000, 15000, false},
		{"reserve equal to 15%, one above", 85001, 100000, 15000, true},
		{"unknown window never compacts", 1 << 30, 0, 16384, false},
		{"negative window never compacts", 10, -1, 0, false},
		{"reserve above window compacts any context", 1, 1000, 2000, true},
		{"huge window does not overflow", 1<<62 - 1, 1<<62 - 1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShouldCompact(tt.context, tt.window, tt.reserve); got != tt.want {
				t.Errorf("ShouldCompact(%d, %d, %d) = %t, want %t", tt.context, tt.window, tt.reserve, got, tt.want)
			}
		})
	}
}

func TestPercentCeil_MatchesExactFormula(t *testing.T) {
	for n := range 1000 {
		want := (n*15 + 99) / 100
		if got := percentCeil(n, 15); got != want {
			t.Fatalf("percentCeil(%d, 15) = %d, want %d", n, got, want)
		}
	}
}
