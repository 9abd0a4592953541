package main

import "testing"

// The caching benchmark bills by Anthropic's rules: the first request
// writes its prefix up to the last breakpoint (a prefix under the minimum
// is not cached), the next reads it and writes only what is new; a server
// that ignores the breakpoints bills everything as input.
func TestCacheServerAccount(t *testing.T) {
	blocks := func(n int, bps ...int) []block {
		out := make([]block, n)
		for i := range out {
			out[i] = block{key: [32]byte{byte(i + 1)}, tokens: 600}
		}
		for _, i := range bps {
			out[i].bp = true
		}
		return out
	}
	s := &cacheServer{honor: true, cache: map[[32]byte]bool{}}
	for _, c := range []struct {
		blocks             []block
		input, read, write int
	}{
		{blocks(3, 0, 2), 0, 0, 1800},
		{blocks(5, 0, 2, 4), 0, 1800, 1200},
		{blocks(6, 0, 4), 600, 3000, 0},
	} {
		if in, rd, wr := s.account(c.blocks); in != c.input || rd != c.read || wr != c.write {
			t.Fatalf("%d blocks: input %d read %d write %d, want %d %d %d", len(c.blocks), in, rd, wr, c.input, c.read, c.write)
		}
	}
	off := &cacheServer{cache: map[[32]byte]bool{}}
	if in, rd, wr := off.account(blocks(5, 0, 2, 4)); in != 3000 || rd != 0 || wr != 0 {
		t.Fatalf("without caching: input %d read %d write %d, want all 3000 as input", in, rd, wr)
	}
}
