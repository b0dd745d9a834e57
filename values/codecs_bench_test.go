package values

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Codec throughput and compression ratio on a few data shapes. Run with:
//
//	go test ./values -run '^$' -bench Codec -benchtime 20x
//
// MB/s counts raw (uncompressed) bytes; "ratio" is raw bytes / encoded bytes.
func BenchmarkCodec(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	shapes := map[string][]byte{}
	small, runs, random := make([]byte, 4*n), make([]byte, 4*n), make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(small[4*i:], uint32(r.IntN(100)))
		binary.LittleEndian.PutUint32(runs[4*i:], uint32(i/300))
		binary.LittleEndian.PutUint32(random[4*i:], r.Uint32())
	}
	shapes["small"], shapes["runs"], shapes["random"] = small, runs, random
	for _, shape := range []string{"small", "runs", "random"} {
		data := shapes[shape]
		b.Run("bitpack/"+shape, func(b *testing.B) {
			var enc []byte
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				enc, _ = appendInlineBitpackedAll(enc[:0], 32, data, n)
			}
			b.ReportMetric(float64(len(data))/float64(len(enc)), "ratio")
		})
		b.Run("unbitpack/"+shape, func(b *testing.B) {
			enc, _ := appendInlineBitpackedAll(nil, 32, data, n)
			out := make([]byte, 0, len(data))
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				out, _ = decodeInlineBitpacked(out[:0], 32, enc, n)
			}
		})
		b.Run("rle/"+shape, func(b *testing.B) {
			var v, l []byte
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				v, l, _ = appendRLE(v[:0], l[:0], 32, 8, data, n)
			}
			b.ReportMetric(float64(len(data))/float64(len(v)+len(l)), "ratio")
		})
		b.Run("unrle/"+shape, func(b *testing.B) {
			v, l, _ := appendRLE(nil, nil, 32, 8, data, n)
			out := make([]byte, 0, len(data))
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				out, _ = DecodeRLE(out[:0], 32, 8, v, l, n)
			}
		})
		for _, s := range []Scheme{SchemeLZ4, SchemeZstd} {
			b.Run(fmt.Sprintf("%v/%s", s, shape), func(b *testing.B) {
				var enc []byte
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					enc, _ = AppendCompressed(enc[:0], s, 0, data)
				}
				b.ReportMetric(float64(len(data))/float64(len(enc)), "ratio")
			})
			b.Run(fmt.Sprintf("un%v/%s", s, shape), func(b *testing.B) {
				enc, _ := AppendCompressed(nil, s, 0, data)
				out := make([]byte, 0, len(data))
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					out, _ = Decompress(out[:0], s, enc)
				}
			})
		}
		b.Run("bss/"+shape, func(b *testing.B) {
			var enc []byte
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				enc = appendByteStreamSplit(enc[:0], 32, data, n)
			}
		})
		b.Run("unbss/"+shape, func(b *testing.B) {
			enc := appendByteStreamSplit(nil, 32, data, n)
			var dec []byte
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				dec, _ = decodeByteStreamSplit(dec[:0], 32, enc, n)
			}
		})
		b.Run("bss64/"+shape, func(b *testing.B) {
			var enc, dec []byte
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				enc = appendByteStreamSplit(enc[:0], 64, data, n/2)
				dec, _ = decodeByteStreamSplit(dec[:0], 64, enc, n/2)
			}
		})
	}
	// Strings: FSST on URL-like values.
	var strs [][]byte
	total := 0
	for i := 0; i < 20000; i++ {
		s := []byte(fmt.Sprintf("https://www.example.com/docs/%d?ref=home", r.IntN(1e9)))
		strs = append(strs, s)
		total += len(s)
	}
	t := BuildFsstTable(strs[:256])
	b.Run("fsst/urls", func(b *testing.B) {
		var enc []byte
		b.SetBytes(int64(total))
		for b.Loop() {
			enc = enc[:0]
			for _, s := range strs {
				enc = t.AppendEncoded(enc, s)
			}
		}
		b.ReportMetric(float64(total)/float64(len(enc)+FsstTableSize), "ratio")
	})
	// The writer's form: a page's values back to back in one buffer.
	var page []byte
	var offs []int
	for _, s := range strs {
		offs = append(offs, len(page))
		page = append(page, s...)
	}
	offs = append(offs, len(page))
	b.Run("fsst/urls-page", func(b *testing.B) {
		var enc []byte
		b.SetBytes(int64(total))
		for b.Loop() {
			enc = enc[:0]
			for k := range strs {
				enc = t.appendEncodedIn(enc, page, offs[k], offs[k+1])
			}
		}
		b.ReportMetric(float64(total)/float64(len(enc)+FsstTableSize), "ratio")
	})
	// The URL class of the benchmarks (internal/corpus): a few prefixes
	// shared by most of the table's symbols ("em-", "ite").
	words := []string{"alpha", "bravo", "charlie", "delta"}
	var cpage []byte
	coffs := []int{0}
	var csample [][]byte
	for i := range 100000 {
		s := fmt.Sprintf("https://www.example.com/catalog/%s/item-%d?ref=%s", words[r.IntN(4)], r.IntN(100000), words[i%3])
		if i < 2000 {
			csample = append(csample, []byte(s))
		}
		cpage = append(cpage, s...)
		coffs = append(coffs, len(cpage))
	}
	ct := BuildFsstTable(csample)
	b.Run("fsst/urls-class", func(b *testing.B) {
		var enc []byte
		b.SetBytes(int64(len(cpage)))
		for b.Loop() {
			enc = enc[:0]
			for k := range len(coffs) - 1 {
				enc = ct.appendEncodedIn(enc, cpage, coffs[k], coffs[k+1])
			}
		}
		b.ReportMetric(float64(len(cpage))/float64(len(enc)+FsstTableSize), "ratio")
	})
	// The page coded as the writer codes it (FsstCodec.Code: one piece,
	// the block holding fewer values than two pieces).
	cblock := Block{N: len(coffs) - 1, Data: cpage, Offsets: make([]uint64, len(coffs))}
	for k, o := range coffs {
		cblock.Offsets[k] = uint64(o)
	}
	b.Run("fsst/urls-class-code", func(b *testing.B) {
		b.SetBytes(int64(len(cpage)))
		for b.Loop() {
			FsstCodec{Table: ct}.Code(cblock)
		}
	})
	var lpage []byte
	lblock := Block{Offsets: []uint64{0}}
	var lsample [][]byte
	for range 100000 {
		for range 12 + r.IntN(9) {
			lpage = append(lpage, byte('a'+r.IntN(26)))
		}
		if len(lsample) < 1000 {
			lsample = append(lsample, lpage[lblock.Offsets[lblock.N]:])
		}
		lblock.Offsets = append(lblock.Offsets, uint64(len(lpage)))
		lblock.N++
	}
	lblock.Data = lpage
	lt := BuildFsstTable(lsample)
	b.Run("fsst/letters-code", func(b *testing.B) {
		b.SetBytes(int64(len(lpage)))
		for b.Loop() {
			FsstCodec{Table: lt}.Code(lblock)
		}
	})
	// A page's coded values expanded as the reader expands them
	// (FsstExpandInto into a buffer sized by DecodedLen).
	for _, pg := range []struct {
		name  string
		t     *FsstTable
		block Block
	}{{"urls-class", ct, cblock}, {"letters", lt, lblock}} {
		coded := FsstCodec{Table: pg.t}.Code(pg.block)
		buf := make([]byte, pg.t.DecodedLen(coded))
		offs := make([]int32, coded.N)
		b.Run("unfsst/"+pg.name+"-exact", func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if err := FsstExpandInto(pg.t, buf, coded, offs, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("unfsst/urls", func(b *testing.B) {
		var codes [][]byte
		for _, s := range strs {
			codes = append(codes, t.AppendEncoded(nil, s))
		}
		out := make([]byte, 0, total)
		b.SetBytes(int64(total))
		for b.Loop() {
			out = out[:0]
			for _, c := range codes {
				out, _ = t.AppendDecoded(out, c)
			}
		}
	})
}
