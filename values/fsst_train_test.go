package values

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// buildFsstTableMap is the trainer as first written, its gains in a Go map
// and its pair counts scanned row by row: TestFsstTrainerSameTables holds
// BuildFsstTable to the tables it builds.
func buildFsstTableMap(sample [][]byte) *FsstTable {
	train, total := trainingSet(sample)
	t := &FsstTable{coded: true}
	t.index()
	if total == 0 {
		return t
	}
	// Codes during training: 0..n-1 are symbols, 256+b is the literal byte b.
	const nCodes = 512
	count1 := make([]int32, nCodes)
	count2 := make([]int32, nCodes*nCodes)
	symOf := func(code int) fsstSym {
		if code >= 256 {
			return fsstSym{v: uint64(code - 256), l: 1}
		}
		return fsstSym{v: t.sym[code], l: t.lens[code]}
	}
	var codes []int
	var cands []fsstCand
	gains := 0 // the previous round's candidate count, to size the next map
	const rounds = 5
	for round := range rounds {
		clear(count1)
		clear(count2)
		for _, s := range train {
			codes = t.trainCodes(codes[:0], s)
			for k, c := range codes {
				count1[c]++
				if k+1 < len(codes) {
					count2[c*nCodes+codes[k+1]]++
				}
			}
		}
		gain := make(map[fsstSym]int, gains)
		for c := range nCodes {
			if count1[c] == 0 {
				continue
			}
			s := symOf(c)
			// Single bytes are worth keeping: an escaped byte costs 2.
			g := int(count1[c]) * int(s.l)
			if s.l == 1 {
				g *= 2
			}
			gain[s] += g
			if round == rounds-1 {
				continue
			}
			row := count2[c*nCodes : (c+1)*nCodes]
			for d, cnt := range row {
				if cnt == 0 {
					continue
				}
				if cs, ok := s.concat(symOf(d)); ok {
					gain[cs] += int(cnt) * int(cs.l)
				}
			}
		}
		// The fsstMaxSymbols best, highest gain first (then longer, then
		// smaller value: a total order, so the table does not depend on map
		// iteration).
		gains = len(gain)
		cands = cands[:0]
		for s, g := range gain {
			cands = append(cands, fsstCand{s, g})
		}
		t.adopt(cands)
	}
	return t
}

// TestFsstTrainerSameTables: BuildFsstTable builds the same table, byte
// for byte, as the map-based trainer, over samples of URLs, random
// letters, repeated words, binary bytes, one long value and tiny ones,
// and again on a reused trainer.
func TestFsstTrainerSameTables(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"https://", "www.", "example", ".com/", "docs/", "item", "?id=", "&q=", "lance", "planar"}
	gen := map[string]func() []byte{
		"urls": func() []byte {
			var b []byte
			for range 2 + r.IntN(8) {
				b = append(b, words[r.IntN(len(words))]...)
			}
			return append(b, fmt.Sprint(r.IntN(100000))...)
		},
		"letters": func() []byte {
			b := make([]byte, 4+r.IntN(30))
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			return b
		},
		"binary": func() []byte {
			b := make([]byte, 1+r.IntN(40))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return b
		},
		"skewed": func() []byte {
			b := make([]byte, 1+r.IntN(12))
			for i := range b {
				b[i] = "aaaaabbbc\x00"[r.IntN(10)]
			}
			return b
		},
	}
	for name, g := range gen {
		for _, n := range []int{1, 3, 50, 400, 5000} {
			sample := make([][]byte, n)
			for i := range sample {
				sample[i] = g()
			}
			want := buildFsstTableMap(sample).AppendBytes(nil)
			for rep := range 2 {
				if got := BuildFsstTable(sample).AppendBytes(nil); !bytes.Equal(got, want) {
					t.Fatalf("%s, %d values, run %d: the table differs from the map trainer's", name, n, rep)
				}
			}
		}
	}
	long := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog "), 1000)
	for _, s := range [][][]byte{{long}, {{'x'}}, {{}, {'a', 'b'}}, nil} {
		if got, want := BuildFsstTable(s).AppendBytes(nil), buildFsstTableMap(s).AppendBytes(nil); !bytes.Equal(got, want) {
			t.Fatalf("sample of %d values: the table differs from the map trainer's", len(s))
		}
	}
}

// BenchmarkBuildFsstTable trains on 16 KiB of URL-like strings and of
// random letters (many more distinct pairs).
func BenchmarkBuildFsstTable(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"https://", "www.", "example", ".com/", "docs/", "item", "?id=", "&q=", "lance", "planar", "/en-us/", "index.html"}
	for _, kind := range []string{"urls", "letters"} {
		var sample [][]byte
		for total := 0; total < FsstTrainBytes; {
			var v []byte
			if kind == "urls" {
				for range 2 + r.IntN(8) {
					v = append(v, words[r.IntN(len(words))]...)
				}
				v = append(v, fmt.Sprint(r.IntN(100000))...)
			} else {
				for range 12 + r.IntN(9) {
					v = append(v, byte('a'+r.IntN(26)))
				}
			}
			sample = append(sample, v)
			total += len(v)
		}
		b.Run(kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				BuildFsstTable(sample)
			}
		})
	}
}
