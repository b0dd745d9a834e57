// Command planar works with Lance files from the shell.
//
//	planar inspect FILE    per column and page: cell, encoding tree, sizes
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/planarlance/planar/reader"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "planar:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: planar inspect [-v] FILE")
	}
	switch args[0] {
	case "inspect":
		fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
		verbose := fs.Bool("v", false, "print every page's full encoding description")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("usage: planar inspect [-v] FILE")
		}
		return inspect(fs.Arg(0), *verbose, out)
	}
	return fmt.Errorf("unknown command %q (want inspect)", args[0])
}

func inspect(path string, verbose bool, out io.Writer) error {
	f, err := reader.OpenPath(path)
	if err != nil {
		return err
	}
	defer f.Close()
	major, minor := f.Version()
	fmt.Fprintf(out, "%s: Lance %d.%d, %d rows, %d columns\n", path, major, minor, f.NumRows(), f.NumColumns())
	fmt.Fprintf(out, "schema: %s\n\n", strings.ReplaceAll(f.Schema().String(), "\n", "\n        "))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "column\tpage\trows\tcell\tmetadata\tencoding\tbuffers\tbytes")
	for c := 0; c < f.NumColumns(); c++ {
		for i, p := range f.Pages(c) {
			var sizes []string
			total := uint64(0)
			for _, b := range p.Buffers {
				sizes = append(sizes, fmt.Sprint(b.Size))
				total += b.Size
			}
			meta := "pb21"
			if p.Planar {
				meta = "planar"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t[%s]\t%d\n", f.ColumnPath(c), i, p.Rows, p.Cell, meta, p.Encoding, strings.Join(sizes, " "), total)
			if verbose {
				tw.Flush()
				fmt.Fprintf(out, "    %s\n", p.Layout)
			}
		}
	}
	return tw.Flush()
}
