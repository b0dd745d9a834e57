// Command quickstart writes a small Arrow table as a Lance file with planar,
// prints what was chosen for every column and page, and reads it back.
//
//	go run ./examples/quickstart [-format 2.2|2.3|2.3-interim] [-policy cost|lance] [-o out.lance]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

func main() {
	out := flag.String("o", filepath.Join(os.TempDir(), "planar-quickstart.lance"), "output file")
	fmtName := flag.String("format", "2.2", "file format: 2.2 (default, read by pylance 14 and LanceDB 0.40), 2.3 (sparse cells; pylance 14 only, unstable there) or 2.3-interim")
	rows := flag.Int("rows", 20000, "rows to write")
	policy := flag.String("policy", "cost", "codec policy: cost (bytes + λ·read cost) or lance (Lance's rules)")
	flag.Parse()
	pol := selector.PolicyCost
	switch *policy {
	case "cost":
	case "lance":
		pol = selector.PolicyLance
	default:
		log.Fatalf("unknown policy %q", *policy)
	}
	format, err := writer.ParseFormat(*fmtName)
	if err != nil {
		log.Fatal(err)
	}

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "score", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "seen_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "embedding", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "backfill", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	rec := build(schema, *rows)
	defer rec.Release()

	w, err := writer.Create(*out, schema, writer.WithFormat(format), writer.WithMaxPageBytes(1<<20), writer.WithPolicy(pol))
	if err != nil {
		log.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	st, _ := os.Stat(*out)
	fmt.Printf("wrote %s: %d rows, %d bytes, format %s\n\n", *out, rec.NumRows(), st.Size(), format)

	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "column\tpage\trows\tcell\tencoding\tbytes\twhy")
	report := w.Report()
	order := map[string]int{}
	for i, f := range schema.Fields() {
		order[f.Name] = i
	}
	top := func(path string) int { return order[strings.SplitN(path, ".", 2)[0]] }
	sort.SliceStable(report, func(i, j int) bool { return top(report[i].Column) < top(report[j].Column) })
	for _, p := range report {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%s\n", p.Column, p.Page, p.Rows, p.Cell, p.Encoding, p.Bytes, p.Reason)
	}
	tw.Flush()

	f, err := reader.OpenPath(*out)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	got, err := f.ReadRange(0, 3)
	if err != nil {
		log.Fatal(err)
	}
	defer got.Release()
	major, minor := f.Version()
	fmt.Printf("\nread back (footer %d.%d), first rows:\n", major, minor)
	for i := 0; i < int(got.NumCols()); i++ {
		v := fmt.Sprint(got.Column(i))
		if len(v) > 90 {
			v = v[:87] + "..."
		}
		fmt.Printf("  %-10s %s\n", got.ColumnName(i), v)
	}
	all, err := f.ReadAll()
	if err != nil {
		log.Fatal(err)
	}
	defer all.Release()
	for i := 0; i < int(rec.NumCols()); i++ {
		if !array.Equal(all.Column(i), rec.Column(i)) {
			log.Fatalf("column %s did not round-trip", rec.ColumnName(i))
		}
	}
	fmt.Println("every column read back equal")
}

func build(schema *arrow.Schema, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	scores := b.Field(1).(*array.Float32Builder)
	seen := b.Field(2).(*array.TimestampBuilder)
	tags := b.Field(3).(*array.ListBuilder)
	tagv := tags.ValueBuilder().(*array.StringBuilder)
	emb := b.Field(4).(*array.FixedSizeListBuilder)
	embv := emb.ValueBuilder().(*array.Float32Builder)
	back := b.Field(5).(*array.ListBuilder)
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			tags.AppendNull()
		case 1:
			tags.Append(true) // empty list
		default:
			tags.Append(true)
			for k := 0; k < i%5; k++ {
				tagv.Append(fmt.Sprintf("tag%d", (i+k)%17))
			}
		}
		if i%3 == 0 {
			emb.AppendNull()
		} else {
			emb.Append(true)
			for k := 0; k < 128; k++ {
				embv.Append(float32(i%97) / float32(k+1))
			}
		}
		back.AppendNull() // a column not backfilled yet
		ids.Append(int64(i))
		if i%7 == 3 {
			scores.AppendNull()
		} else {
			scores.Append(float32(i%1000) / 10)
		}
		if i%2 == 0 {
			seen.AppendNull()
		} else {
			seen.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1000))
		}
	}
	return b.NewRecordBatch()
}
