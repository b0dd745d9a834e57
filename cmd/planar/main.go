// Command planar works with Lance files and datasets from the shell.
//
//	planar convert [flags] SRC DST   Parquet, Arrow IPC or CSV to a Lance file or dataset
//	planar inspect [flags] PATH      per column and page: cell, encoding tree, sizes
//	planar cat [flags] PATH          rows as an aligned table or JSON lines
//
// Install with
//
//	go install github.com/planarlance/planar/cmd/planar@latest
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const usage = `planar works with Lance files and datasets.

Usage:
  planar convert [flags] SRC DST   Parquet, Arrow IPC or CSV to a Lance file (or --dataset)
  planar inspect [flags] PATH      per column and page: cell, encoding, buffer sizes
  planar cat [flags] PATH          print rows as a table or JSON lines
  planar help [COMMAND]            this text, or a command's flags

PATH is a Lance file or a Lance dataset directory. Run "planar COMMAND -h"
for a command's flags.
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

// run executes one command line, writing results to out. Progress goes to
// stderr (see progress.go).
func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(out, usage)
		return fmt.Errorf("no command given: %w", errUsage)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 2 && args[0] == "help" && args[1] != "help" {
			return run([]string{args[1], "-h"}, out) // planar help COMMAND
		}
		fmt.Fprint(out, usage)
		return nil
	case "inspect":
		return runInspect(args[1:], out)
	case "convert":
		return runConvert(args[1:], out)
	case "cat":
		return runCat(args[1:], out)
	}
	return fmt.Errorf("unknown command %q (run \"planar help\"): %w", args[0], errUsage)
}

// newFlags makes a command's flag set; its usage text is head followed by
// the flags.
func newFlags(name, head string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, head)
		fmt.Fprintln(out, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args (flags may come after the positional arguments too)
// and checks the number of positional arguments. help reports -h.
func parseFlags(fs *flag.FlagSet, args []string, nargs int) (pos []string, help bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, true, nil
			}
			return nil, false, fmt.Errorf("%s: %v: %w", fs.Name(), err, errUsage)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			pos = append(pos, rest[1:]...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) != nargs {
		fs.Usage()
		return nil, false, fmt.Errorf("%s takes %d argument(s), got %d (%s): %w", fs.Name(), nargs, len(pos), strings.Join(pos, " "), errUsage)
	}
	return pos, false, nil
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, " ") }
func (m *multiFlag) Set(s string) error {
	*m = append(*m, s)
	return nil
}
