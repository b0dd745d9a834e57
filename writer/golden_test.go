package writer_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/writer"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// GoldenCodecRows is the row count of the codec golden files: two
// bit-packing blocks, several chunks of every codec.
const goldenCodecRows = 1200

// TestCodecGoldenFiles writes every case of the codec corpus and compares
// the bytes with the checked-in golden file, so any change to a codec's
// output is seen (and, with -update, reviewed as a diff of binary files).
// The interop tests have pylance read the same golden files.
func TestCodecGoldenFiles(t *testing.T) {
	mem := memory.NewGoAllocator()
	dir := filepath.Join("..", "testdata", "golden", "codecs")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range corpus.CodecCases(goldenCodecRows) {
		if c.Column.Name == "wide_binary" {
			continue // large and not about a codec
		}
		rec := c.Record(mem)
		// The golden files are 2.3 (writer's default before 2.2 became
		// it): the interop tests check pylance 14 reads each.
		got := writeAll(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_3))
		path := filepath.Join(dir, c.Name()+".lance")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./writer -run TestCodecGoldenFiles -update)", c.Name(), err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from %s (%d vs %d bytes); if intended, rerun with -update and check pylance still reads it", c.Name(), path, len(got), len(want))
		}
	}
}
