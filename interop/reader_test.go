package interop

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
)

// pylanceWriteScript builds a pyarrow table by running the Python code in
// argv[1] (which must bind t), writes it as an Arrow IPC file (what pylance
// was given) and as one Lance file per requested version.
const pylanceWriteScript = `
import random, sys
import pyarrow as pa, pyarrow.ipc as ipc
from lance.file import LanceFileWriter
code, base = sys.argv[1], sys.argv[2]
random.seed(7)
env = {"pa": pa, "random": random}
exec(code, env)
t = env["t"]
with ipc.new_file(base + ".arrow", t.schema) as w:
    w.write_table(t)
for v in sys.argv[3:]:
    with LanceFileWriter(base + "-" + v + ".lance", t.schema, version=v) as w:
        w.write_batch(t)
`

// pylanceWrites has pylance write the table the Python code builds (code
// binds t; pa and random are in scope) in each file version; it returns the
// IPC file of the table and the Lance files, in the order of versions.
func pylanceWrites(t *testing.T, py, dir, name, code string, versions ...string) (string, []string) {
	t.Helper()
	base := filepath.Join(dir, name)
	cmd := exec.Command(py, append([]string{"-c", pylanceWriteScript, code, base}, versions...)...)
	cmd.Env = append(os.Environ(), "RUST_LOG=error")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pylance writing %s: %v\n%s", name, err, out)
	}
	var files []string
	for _, v := range versions {
		files = append(files, base+"-"+v+".lance")
	}
	return base + ".arrow", files
}

// readerCase is a table pylance writes and planar must read back exactly.
type readerCase struct {
	name, code string
	versions   []string
	// want, if set, is a fragment that must appear in some page's
	// "cell: encoding" of the 2.3 file (or of every file with wantAll).
	want []string
}

func runReaderCases(t *testing.T, cases []readerCase) {
	py := python(t)
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			versions := c.versions
			if versions == nil {
				versions = []string{"2.1", "2.2", "2.3"}
			}
			ipcPath, files := pylanceWrites(t, py, dir, c.name, c.code, versions...)
			want := readIPC(t, ipcPath)
			defer want.Release()
			var encs []string
			for _, f := range files {
				checkPlanarRead(t, f, want)
				if !t.Failed() {
					e, _ := pageEncodings(t, f)
					encs = append(encs, fmt.Sprintf("%s: %v", filepath.Base(f), e))
				}
			}
			all := strings.Join(encs, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("no page encoded with %q; pages:\n%s", w, all)
				}
			}
			t.Logf("pages:\n%s", all)
		})
	}
}

// TestReadPylanceDictionaries: pylance's uint8-keyed dictionaries of more
// than 128 items (keys with the top bit set) read back exactly.
func TestReadPylanceDictionaries(t *testing.T) {
	runReaderCases(t, []readerCase{
		{name: "dict_u8_200", code: `
items = pa.array(["item%d" % i for i in range(200)])
idx = [(i * 7) % 200 for i in range(1000)]
t = pa.table({"d": pa.DictionaryArray.from_arrays(pa.array(idx, pa.uint8()), items)})`, want: []string{"dict="}},
		{name: "dict_u8_256_nulls", code: `
items = pa.array([float(i) for i in range(256)])
idx = [None if i % 11 == 3 else (i * 5) % 256 for i in range(3000)]
t = pa.table({"d": pa.DictionaryArray.from_arrays(pa.array(idx, pa.uint8()), items)})`},
		{name: "dict_u16_40000", code: `
items = pa.array(["s%d" % i for i in range(40000)])
idx = [(i * 7919) % 40000 for i in range(50000)]
t = pa.table({"d": pa.DictionaryArray.from_arrays(pa.array(idx, pa.uint16()), items)})`},
	})
}

// TestReadPylanceConstantScalars: Lance 2.2 stores a constant that does not
// fit the 32-byte inline value (strings, binaries, wide fixed-size binaries)
// in a scalar value buffer, with or without levels; planar reads them all.
func TestReadPylanceConstantScalars(t *testing.T) {
	runReaderCases(t, []readerCase{
		{name: "str_one_row", code: `t = pa.table({"s": pa.array(["hello"])})`, want: []string{"scalar buffer"}},
		{name: "str_x10", code: `t = pa.table({"s": pa.array(["x"] * 10)})`, want: []string{"scalar buffer"}},
		{name: "str_empty", code: `t = pa.table({"s": pa.array([""] * 10)})`},
		{name: "large_string", code: `t = pa.table({"s": pa.array(["long value " * 9] * 100, pa.large_string())})`, want: []string{"scalar buffer"}},
		{name: "binary", code: `t = pa.table({"s": pa.array([b"\x00\xffab"] * 33, pa.binary())})`, want: []string{"scalar buffer"}},
		{name: "large_binary", code: `t = pa.table({"s": pa.array([b"ab"] * 7, pa.large_binary())})`, want: []string{"scalar buffer"}},
		{name: "fsb4", code: `t = pa.table({"s": pa.array([b"abcd"] * 10, pa.binary(4))})`},
		{name: "fsb40", code: `t = pa.table({"s": pa.array([bytes(range(40))] * 10, pa.binary(40))})`, want: []string{"scalar buffer"}},
		{name: "str_nulls", code: `t = pa.table({"s": pa.array(["x", None] * 50)})`, want: []string{"scalar and levels"}},
		{name: "list_str", code: `t = pa.table({"l": pa.array([["ab", "ab"], [], None, ["ab"]] * 20, pa.list_(pa.string()))})`},
		{name: "struct_str", code: `t = pa.table({"s": pa.array([{"a": "same", "b": 1}, None] * 20, pa.struct([("a", pa.string()), ("b", pa.int32())]))})`, want: []string{"variable(rle(range32"}},
		{name: "bool_true", code: `t = pa.table({"b": pa.array([True] * 100)})`},
	})
}

// TestReadPylanceBlockCodecs: pylance 2.3 stores the structural sequences of
// sparse pages (non-empty positions, list counts, validity positions) and
// offsets with any block codec its select_block_codec picks: constant,
// range, delta, bit-packing, flat, RLE, dictionary, general. Data shaped to
// make each of them worth it read back exactly.
func TestReadPylanceBlockCodecs(t *testing.T) {
	v23 := []string{"2.3"}
	runReaderCases(t, []readerCase{
		// The reported files: list counts stored as a block dictionary.
		{name: "list_list_empty", versions: []string{"2.2", "2.3"}, code: `t = pa.table({"l": pa.array([[[]], [[], []], []] * 10, pa.list_(pa.list_(pa.int32())))})`, want: []string{"counts=dict["}},
		{name: "struct_list_f32", versions: []string{"2.2", "2.3"}, code: `
t = pa.table({"s": pa.array([{"f": [1.5, 2.5]}, {"f": []}, {"f": None}, None] * 250, pa.struct([("f", pa.list_(pa.float32()))]))})`},
		// Few distinct counts in no order: dictionary.
		{name: "counts_dict", versions: v23, code: `
rows = [None if i % 5 == 0 else [] if i % 5 == 1 else list(range(random.choice([1, 7, 100]))) for i in range(4000)]
t = pa.table({"l": pa.array(rows, pa.list_(pa.int32()))})`, want: []string{"counts=dict["}},
		// Long runs of equal counts: RLE.
		{name: "counts_runs", versions: v23, code: `
rows = []
for k in range(300):
    rows += [None] * 5 + [[1] * (k % 3 + 1)] * 30 + [[]] * 5
t = pa.table({"l": pa.array(rows, pa.list_(pa.int32()))})`, want: []string{"counts=rle("}},
		// Every third row null, the rest alternating empty and runs.
		{name: "positions_range", versions: v23, code: `
t = pa.table({"l": pa.array([None if i % 3 == 0 else [] if i % 3 == 1 else [1] * ((i // 300) % 4 + 1) for i in range(30000)], pa.list_(pa.int32()))})`, want: []string{"positions=range64"}},
		// Many distinct, growing positions: delta or bit-packing.
		{name: "positions_spread", versions: v23, code: `
rows = [[i, i] if i % 3 == 0 or i % 7 == 0 else ([] if i % 2 else None) for i in range(30000)]
t = pa.table({"l": pa.array(rows, pa.list_(pa.int32()))})`},
		// Large random counts: general compression or bit-packing.
		{name: "counts_large", versions: v23, code: `
rows = [None if i % 4 == 0 else list(range(random.randrange(1, 60))) for i in range(40000)]
t = pa.table({"l": pa.array(rows, pa.list_(pa.int8()))})`, want: []string{"counts=general(zstd"}},
		// Sparse nulls of a flat column: validity positions.
		{name: "sparse_nulls", versions: v23, code: `
t = pa.table({"x": pa.array([None if i % 97 == 0 or i % 1013 == 5 else i for i in range(50000)], pa.int64()),
              "s": pa.array([None if i % 89 == 0 else "v%d" % (i % 13) for i in range(50000)])})`},
		// Strings of equal length: offsets as a range; of a few lengths:
		// other offset codecs.
		{name: "offsets", versions: v23, code: `
t = pa.table({"a": pa.array(["%06d" % i for i in range(20000)]),
              "b": pa.array(["x" * random.choice([1, 5, 9]) for i in range(20000)]),
              "c": pa.array(["y" * (i % 50) for i in range(20000)])})`},
		// Nested lists with nulls at every level.
		{name: "nested_nulls", versions: v23, code: `
def row(i):
    if i % 11 == 0: return None
    return [None if (i + j) % 5 == 0 else [None if (i + j + k) % 7 == 0 else k for k in range((i + j) % 4)] for j in range(i % 6)]
t = pa.table({"l": pa.array([row(i) for i in range(20000)], pa.list_(pa.list_(pa.int32())))})`},
	})
}

// TestDamagedPylanceFiles: damaged variants of files pylance writes (every
// version, flat and nested columns, constant, dictionary and sparse pages)
// fail with errors wrapping ErrCorrupt or ErrUnsupported and never panic.
func TestDamagedPylanceFiles(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	_, files := pylanceWrites(t, py, dir, "mixed", `
n = 300
t = pa.table({
    "i": pa.array([None if i % 7 == 0 else i * 3 for i in range(n)], pa.int64()),
    "c": pa.array(["same"] * n),
    "s": pa.array(["v%d" % (i % 17) for i in range(n)]),
    "l": pa.array([None if i % 5 == 0 else [] if i % 5 == 1 else [i, None] for i in range(n)], pa.list_(pa.int32())),
    "ll": pa.array([[[]], [[], []], []] * (n // 3), pa.list_(pa.list_(pa.int32()))),
    "st": pa.array([None if i % 4 == 0 else {"a": i, "b": "x" * (i % 3)} for i in range(n)], pa.struct([("a", pa.int32()), ("b", pa.string())])),
    "d": pa.DictionaryArray.from_arrays(pa.array([i % 200 for i in range(n)], pa.uint8()), pa.array(["k%d" % i for i in range(200)])),
    "f": pa.array([[float(i), 1.0] for i in range(n)], pa.list_(pa.float32(), 2)),
    "b": pa.array([i % 3 == 0 for i in range(n)]),
})`, "2.1", "2.2", "2.3")
	tried, bad := 0, 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := readDamaged(b); err != nil {
			t.Fatalf("%s undamaged: %v", filepath.Base(path), err)
		}
		labels, variants := corpus.Damage(b, 1500, uint64(len(b)))
		for i, v := range variants {
			tried++
			err, p := readNoPanic(v)
			what := fmt.Sprintf("%s, %s", filepath.Base(path), labels[i])
			switch {
			case p != nil:
				bad++
				t.Errorf("%s: panic: %v", what, p)
			case err != nil && !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported):
				bad++
				t.Errorf("%s: error wraps neither ErrCorrupt nor ErrUnsupported: %v", what, err)
			}
			if bad > 20 {
				t.Fatal("too many failures")
			}
		}
	}
	t.Logf("%d damaged variants of %d pylance files", tried, len(files))
}

func readNoPanic(b []byte) (err error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	return readDamaged(b), nil
}

// readDamaged opens b and reads all of it, a range and a few rows.
func readDamaged(b []byte) error {
	f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	rec, err := f.ReadAll()
	if err != nil {
		return err
	}
	rec.Release()
	n := f.NumRows()
	if n == 0 {
		return nil
	}
	if rec, err = f.ReadRange(n/3, n-n/3); err != nil {
		return err
	}
	rec.Release()
	if rec, err = f.Take([]int64{n - 1, 0, n / 2}); err != nil {
		return err
	}
	rec.Release()
	return nil
}
