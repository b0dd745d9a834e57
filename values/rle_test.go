package values

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// rleTestValues encodes vals as w-byte little-endian values.
func rleTestValues(w int, vals ...uint64) []byte {
	var b []byte
	for _, v := range vals {
		b = appendLE(b, w, v)
	}
	return b
}

func TestRLEExamples(t *testing.T) {
	src := rleTestValues(4, 7, 7, 7, 2, 2)
	v, l, err := appendRLE(nil, nil, 32, 8, src, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := cxHex(t, "07 00 00 00 02 00 00 00"); !bytes.Equal(v, want) {
		t.Fatalf("values % x want % x", v, want)
	}
	if want := cxHex(t, "03 02"); !bytes.Equal(l, want) {
		t.Fatalf("lengths % x want % x", l, want)
	}
	if got := RunCount(32, src, 5); got != 2 {
		t.Fatalf("RunCount = %d", got)
	}
	dec, err := DecodeRLE(nil, 32, 8, v, l, 5)
	if err != nil || !bytes.Equal(dec, src) {
		t.Fatalf("DecodeRLE = % x, %v", dec, err)
	}

	blk, err := appendRLEBlock([]byte{0xEE}, 32, 8, src, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := cxHex(t, "EE 08 00 00 00 00 00 00 00 07 00 00 00 02 00 00 00 03 02"); !bytes.Equal(blk, want) {
		t.Fatalf("block % x want % x", blk, want)
	}
	dec, err = decodeRLEBlock([]byte{1}, 32, 8, blk[1:], 5)
	if err != nil || !bytes.Equal(dec[1:], src) || dec[0] != 1 {
		t.Fatalf("decodeRLEBlock = % x, %v", dec, err)
	}

	long := bytes.Repeat([]byte{9}, 300)
	v, l, err = appendRLE(nil, nil, 8, 8, long, 300)
	if err != nil || !bytes.Equal(v, []byte{9, 9}) || !bytes.Equal(l, []byte{0xFF, 0x2D}) {
		t.Fatalf("300×9: % x / % x, %v", v, l, err)
	}
	v, l, err = appendRLE(nil, nil, 8, 16, long, 300)
	if err != nil || !bytes.Equal(v, []byte{9}) || !bytes.Equal(l, []byte{0x2C, 0x01}) {
		t.Fatalf("300×9 u16: % x / % x, %v", v, l, err)
	}
	if got := RunCount(8, long, 300); got != 1 {
		t.Fatalf("RunCount(300×9) = %d", got)
	}
}

func TestRLESplitRuns(t *testing.T) {
	// 1000 identical u8-length runs: 255,255,255,235.
	src := rleTestValues(2, make([]uint64, 1000)...)
	v, l, err := appendRLE(nil, nil, 16, 8, src, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(l, []byte{255, 255, 255, 235}) || len(v) != 8 {
		t.Fatalf("lengths % x, %d value bytes", l, len(v))
	}
	// 70000 with u16 lengths: 65535 + 4465.
	src = rleTestValues(1, make([]uint64, 70000)...)
	v, l, err = appendRLE(nil, nil, 8, 16, src, 70000)
	if err != nil {
		t.Fatal(err)
	}
	if want := rleTestValues(2, 65535, 4465); !bytes.Equal(l, want) || len(v) != 2 {
		t.Fatalf("lengths % x want % x", l, want)
	}
	dec, err := DecodeRLE(nil, 8, 16, v, l, 70000)
	if err != nil || !bytes.Equal(dec, src) {
		t.Fatalf("decode split runs: %v", err)
	}
}

func TestRLERoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, bits := range []int{8, 16, 32, 64} {
		w := bits / 8
		for _, lenBits := range []int{8, 16, 32} {
			for trial := range 20 {
				n := r.IntN(3000)
				if trial == 0 {
					n = 0
				}
				var src []byte
				for len(src) < n*w {
					val := r.Uint64()
					if r.IntN(4) == 0 {
						val = 0
					}
					run := 1 + r.IntN(1+r.IntN(600))
					for range run {
						src = appendLE(src, w, val)
					}
				}
				src = src[:n*w]
				v, l, err := appendRLE([]byte{1}, []byte{2}, bits, lenBits, src, n)
				if err != nil {
					t.Fatal(err)
				}
				v, l = v[1:], l[1:]
				if n > 0 && len(v)/w < RunCount(bits, src, n) {
					t.Fatalf("fewer entries than runs")
				}
				for i := 0; i < len(l); i += lenBits / 8 {
					if rleLoad(l[i:], lenBits/8, 0) == 0 {
						t.Fatal("zero run length emitted")
					}
				}
				dec, err := DecodeRLE([]byte{3}, bits, lenBits, v, l, n)
				if err != nil || !bytes.Equal(dec[1:], src) {
					t.Fatalf("bits=%d len=%d n=%d: mini-block round trip: %v", bits, lenBits, n, err)
				}
				blk, err := appendRLEBlock(nil, bits, lenBits, src, n)
				if err != nil {
					t.Fatal(err)
				}
				if got := binary.LittleEndian.Uint64(blk); int(got) != len(v) {
					t.Fatalf("block values length %d want %d", got, len(v))
				}
				if !bytes.Equal(blk[8:], append(append([]byte{}, v...), l...)) {
					t.Fatal("block parts differ from mini-block parts")
				}
				dec, err = decodeRLEBlock(nil, bits, lenBits, blk, n)
				if err != nil || !bytes.Equal(dec, src) {
					t.Fatalf("bits=%d len=%d n=%d: block round trip: %v", bits, lenBits, n, err)
				}
			}
		}
	}
}

func TestRLEClamp(t *testing.T) {
	// Runs cover 3+4+5 = 12 values; a chunk declaring 5 takes the first 5.
	v := rleTestValues(4, 1, 2, 3)
	l := []byte{3, 4, 5}
	dec, err := DecodeRLE(nil, 32, 8, v, l, 5)
	if want := rleTestValues(4, 1, 1, 1, 2, 2); err != nil || !bytes.Equal(dec, want) {
		t.Fatalf("clamped decode % x, %v", dec, err)
	}
	// Ignored trailing runs are not inspected (zero length after n reached).
	dec, err = DecodeRLE(nil, 32, 8, v, []byte{5, 0, 0}, 5)
	if err != nil || len(dec) != 20 {
		t.Fatalf("trailing runs: %v", err)
	}
	// Block form is strict.
	blk := binary.LittleEndian.AppendUint64(nil, uint64(len(v)))
	blk = append(append(blk, v...), l...)
	for _, n := range []int{5, 11, 13} {
		if _, err := decodeRLEBlock(nil, 32, 8, blk, n); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("block n=%d: want ErrCorrupt, got %v", n, err)
		}
	}
	if dec, err := decodeRLEBlock(nil, 32, 8, blk, 12); err != nil || len(dec) != 48 {
		t.Fatalf("block n=12: %v", err)
	}
	// Runs summing to n before the last run: extra runs are corrupt in block form.
	blk2 := binary.LittleEndian.AppendUint64(nil, 8)
	blk2 = append(append(blk2, rleTestValues(4, 1, 2)...), 5, 1)
	if _, err := decodeRLEBlock(nil, 32, 8, blk2, 5); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("extra run: want ErrCorrupt, got %v", err)
	}
}

func TestRLEErrors(t *testing.T) {
	v := rleTestValues(2, 1, 2)
	l := []byte{2, 2}
	cases := map[string]func() error{
		"too few values": func() error { _, err := DecodeRLE(nil, 16, 8, v, l, 5); return err },
		"count mismatch": func() error { _, err := DecodeRLE(nil, 16, 8, v, l[:1], 2); return err },
		"ragged values":  func() error { _, err := DecodeRLE(nil, 16, 8, v[:3], l, 2); return err },
		"ragged lengths": func() error { _, err := DecodeRLE(nil, 16, 16, v, []byte{2, 0, 2}, 2); return err },
		"zero length":    func() error { _, err := DecodeRLE(nil, 16, 8, v, []byte{0, 2}, 2); return err },
		"empty buffers":  func() error { _, err := DecodeRLE(nil, 16, 8, nil, nil, 1); return err },
		"negative n":     func() error { _, err := DecodeRLE(nil, 16, 8, v, l, -1); return err },
		"block short":    func() error { _, err := decodeRLEBlock(nil, 16, 8, []byte{4, 0, 0}, 4); return err },
		"block vlen big": func() error {
			b := binary.LittleEndian.AppendUint64(nil, 1<<63)
			_, err := decodeRLEBlock(nil, 16, 8, append(b, 1, 2, 3), 4)
			return err
		},
		"block truncated": func() error {
			b, _ := appendRLEBlock(nil, 16, 8, rleTestValues(2, 1, 1, 2, 2), 4)
			_, err := decodeRLEBlock(nil, 16, 8, b[:len(b)-1], 4)
			return err
		},
		"block lengths part wrong": func() error {
			b, _ := appendRLEBlock(nil, 16, 16, rleTestValues(2, 1, 1, 2, 2), 4)
			_, err := decodeRLEBlock(nil, 16, 16, append(b, 1, 0), 4)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: want ErrCorrupt, got %v", name, err)
		}
	}
	if _, err := DecodeRLE(nil, 24, 8, v, l, 2); !errors.Is(err, ErrUnsupported) {
		t.Errorf("bits 24: %v", err)
	}
	if _, err := decodeRLEBlock(nil, 16, 64, v, 2); !errors.Is(err, ErrUnsupported) {
		t.Errorf("lenBits 64: %v", err)
	}
	if _, _, err := appendRLE(nil, nil, 32, 8, []byte{1, 2, 3}, 1); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("short src: %v", err)
	}
	if got := RunCount(12, v, 2); got != 0 {
		t.Errorf("RunCount bad width = %d", got)
	}
	// n = 0 decodes to nothing regardless of the buffers.
	if dec, err := DecodeRLE([]byte{1}, 16, 8, nil, []byte{1, 2, 3}, 0); err != nil || len(dec) != 1 {
		t.Errorf("n=0: %v", err)
	}
}

// rleFuzzWidths maps a selector byte to (bits, lenBits).
func rleFuzzWidths(sel uint8) (int, int) {
	return []int{8, 16, 32, 64}[sel&3], []int{8, 16, 32, 8}[(sel>>2)&3]
}

func FuzzDecodeRLE(f *testing.F) {
	f.Add(uint8(2), uint16(5), cxHex(f, "07 00 00 00 02 00 00 00"), []byte{3, 2})
	f.Add(uint8(2), uint16(3), cxHex(f, "07 00 00 00 02 00 00 00"), []byte{3, 2})
	f.Add(uint8(0), uint16(300), []byte{9, 9}, []byte{0xFF, 0x2D})
	f.Add(uint8(4), uint16(300), []byte{9}, []byte{0x2C, 0x01})
	f.Add(uint8(9), uint16(9), []byte{1, 0}, []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, sel uint8, n16 uint16, values, lengths []byte) {
		bits, lenBits := rleFuzzWidths(sel)
		n := int(n16)
		dec, err := DecodeRLE([]byte{0xAA}, bits, lenBits, values, lengths, n)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if len(dec) != 1 {
				t.Fatal("dst changed on error")
			}
			return
		}
		if len(dec) != 1+n*bits/8 {
			t.Fatalf("decoded %d bytes, want %d", len(dec)-1, n*bits/8)
		}
		// Re-encoding the output must reproduce it.
		v, l, err := appendRLE(nil, nil, bits, lenBits, dec[1:], n)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRLE(nil, bits, lenBits, v, l, n)
		if err != nil || !bytes.Equal(again, dec[1:]) {
			t.Fatalf("re-round-trip: %v", err)
		}
	})
}

func FuzzDecodeRLEBlock(f *testing.F) {
	f.Add(uint8(2), uint16(5), cxHex(f, "08 00 00 00 00 00 00 00 07 00 00 00 02 00 00 00 03 02"))
	f.Add(uint8(2), uint16(4), cxHex(f, "08 00 00 00 00 00 00 00 07 00 00 00 02 00 00 00 03 02"))
	f.Add(uint8(0), uint16(300), cxHex(f, "02 00 00 00 00 00 00 00 09 09 FF 2D"))
	f.Add(uint8(0), uint16(0), []byte{})
	f.Fuzz(func(t *testing.T, sel uint8, n16 uint16, src []byte) {
		bits, lenBits := rleFuzzWidths(sel)
		n := int(n16)
		dec, err := decodeRLEBlock(nil, bits, lenBits, src, n)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(dec) != n*bits/8 {
			t.Fatalf("decoded %d bytes, want %d", len(dec), n*bits/8)
		}
		blk, err := appendRLEBlock(nil, bits, lenBits, dec, n)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeRLEBlock(nil, bits, lenBits, blk, n)
		if err != nil || !bytes.Equal(again, dec) {
			t.Fatalf("re-round-trip: %v", err)
		}
	})
}

func FuzzRLERoundTrip(f *testing.F) {
	f.Add(uint8(0), bytes.Repeat([]byte{9}, 300))
	f.Add(uint8(2), rleTestValues(4, 7, 7, 7, 2, 2))
	f.Add(uint8(7), []byte{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, sel uint8, src []byte) {
		bits, lenBits := rleFuzzWidths(sel)
		w := bits / 8
		// Stretch the input into long runs so splitting is exercised.
		reps := 1 + int(sel>>4)*20
		var in []byte
		for i := 0; i+w <= len(src); i += w {
			for range reps {
				in = append(in, src[i:i+w]...)
			}
		}
		n := len(in) / w
		v, l, err := appendRLE(nil, nil, bits, lenBits, in, n)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := DecodeRLE(nil, bits, lenBits, v, l, n)
		if err != nil || !bytes.Equal(dec, in) {
			t.Fatalf("mini-block round trip: %v", err)
		}
		blk, err := appendRLEBlock(nil, bits, lenBits, in, n)
		if err != nil {
			t.Fatal(err)
		}
		dec, err = decodeRLEBlock(nil, bits, lenBits, blk, n)
		if err != nil || !bytes.Equal(dec, in) {
			t.Fatalf("block round trip: %v", err)
		}
	})
}
