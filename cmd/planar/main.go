// Command planar works with Lance files from the shell.
//
//	planar inspect FILE    per column and page: cell, encoding tree, sizes
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/planarlance/planar/reader"
)

const usage = `planar works with Lance files (one Lance file, not a dataset directory).

Usage:
  planar inspect [-v] FILE   per column and page: cell, encoding, buffer sizes
  planar help                this text

Run "planar inspect -h" for the command's flags.
`

// errUsage marks a command line that could not be understood (exit 2).
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "planar:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "planar:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(out, usage)
		return fmt.Errorf("no command given: %w", errUsage)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(out, usage)
		return nil
	case "inspect":
		fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
		fs.SetOutput(out)
		verbose := fs.Bool("v", false, "print every page's full encoding description")
		fs.Usage = func() {
			fmt.Fprintln(out, "Usage: planar inspect [-v] FILE\n\nPrints the file's version, rows and schema, then one line per column and page:\nthe cell (structure x values), the metadata flavour, the encoding and the buffer sizes.\n\nFlags:")
			fs.PrintDefaults()
		}
		if err := fs.Parse(args[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return fmt.Errorf("inspect: %v: %w", err, errUsage)
		}
		if fs.NArg() != 1 {
			fs.Usage()
			return fmt.Errorf("inspect takes one FILE: %w", errUsage)
		}
		return inspect(fs.Arg(0), *verbose, out)
	}
	return fmt.Errorf("unknown command %q (run \"planar help\"): %w", args[0], errUsage)
}

func inspect(path string, verbose bool, out io.Writer) error {
	f, err := reader.OpenPath(path)
	if err != nil {
		return err
	}
	defer f.Close()
	major, minor := f.Version()
	fmt.Fprintf(out, "%s: Lance %d.%d, %d rows, %d columns\n", path, major, minor, f.NumRows(), f.NumColumns())
	fmt.Fprintln(out, "schema:")
	for _, fd := range f.Schema().Fields() {
		null := ""
		if fd.Nullable {
			null = ", nullable"
		}
		fmt.Fprintf(out, "  %s: %s%s\n", fd.Name, fd.Type, null)
	}
	fmt.Fprintln(out)
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
