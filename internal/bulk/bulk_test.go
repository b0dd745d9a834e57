package bulk

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestAppendCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, Piece - 1, Piece, Piece + 1, 3*Piece + 17} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		for _, pre := range []int{0, 5} {
			dst := bytes.Repeat([]byte{9}, pre)
			got := Append(dst, src)
			if !bytes.Equal(got[:pre], dst[:pre]) || !bytes.Equal(got[pre:], src) {
				t.Errorf("Append(%d bytes after %d) differs", n, pre)
			}
		}
		out := make([]byte, n+3)
		if k := Copy(out, src); k != n || !bytes.Equal(out[:n], src) {
			t.Errorf("Copy of %d bytes: %d copied or bytes differ", n, k)
		}
		short := make([]byte, n/2)
		if k := Copy(short, src); k != n/2 || !bytes.Equal(short, src[:n/2]) {
			t.Errorf("Copy into %d of %d bytes: %d copied", n/2, n, k)
		}
	}
	z := bytes.Repeat([]byte{7}, 2*Piece+3)
	Clear(z[1:])
	if z[0] != 7 || !bytes.Equal(z[1:], make([]byte, 2*Piece+2)) {
		t.Error("Clear left bytes or cleared outside")
	}
	var c Counter
	for range 3 * Piece / 1000 {
		c.Add(1000)
	}
	if c.n >= Piece {
		t.Errorf("counter at %d, past a piece", c.n)
	}
}
