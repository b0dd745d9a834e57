package writer

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/planarlance/planar/internal/format"
)

// countingWriter records what it is given and how many writes.
type countingWriter struct {
	bytes.Buffer
	writes int
	fail   int // the write that fails (0: none)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes == w.fail {
		return 0, io.ErrClosedPipe
	}
	return w.Buffer.Write(p)
}

// TestWriteBufferParts: parts (empty, a few bytes, under and over
// stageBytes, enough small ones to fill the stage several times) are
// written back to back as one aligned buffer, small ones gathered into few
// writes; a failing write is returned.
func TestWriteBufferParts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var parts [][]byte
	var want []byte
	for _, n := range []int{8, 0, 3, 32 << 10, stageBytes + 5, 1, stageBytes, 7} {
		parts = append(parts, make([]byte, n))
	}
	for range 100 {
		parts = append(parts, make([]byte, 8+r.IntN(40<<10)))
	}
	for _, p := range parts {
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		want = append(want, p...)
	}
	w := &countingWriter{}
	s := &sink{w: w}
	if err := s.write([]byte("lead")); err != nil {
		t.Fatal(err)
	}
	pos, n, err := s.writeBufferParts(parts)
	if err != nil {
		t.Fatal(err)
	}
	if pos%format.Alignment != 0 || n != len(want) || s.pos != pos+uint64(n) {
		t.Fatalf("position %d, %d bytes (want %d), sink at %d", pos, n, len(want), s.pos)
	}
	if got := w.Bytes()[pos:]; !bytes.Equal(got, want) {
		t.Fatal("the buffer written is not the parts back to back")
	}
	if most := 2 + 2*len(want)/stageBytes + 4; w.writes > most {
		t.Errorf("%d writes for %d bytes of parts, want at most %d", w.writes, len(want), most)
	}
	for fail := 2; fail <= 4; fail++ {
		s := &sink{w: &countingWriter{fail: fail}}
		if _, _, err := s.writeBufferParts(parts); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("failing write %d: %v", fail, err)
		}
	}
}
