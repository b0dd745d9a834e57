package writer

import (
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/selector"
)

// Format selects the file version and the flavour of page metadata.
type Format int

const (
	// Format2_3 writes footer 2.3 and planar page metadata
	// (/lance.encodings23.PlanarLayout): read by pylance 14, unstable in
	// Lance 14, not read by LanceDB 0.40 (Lance 13).
	Format2_3 Format = iota
	// Format2_2 writes footer 2.2 and pb21 page metadata
	// (/lance.encodings21.PageLayout), readable by every current Lance.
	// This is the default.
	Format2_2
	// Format2_3Interim writes footer 2.3 with pb21 page metadata: the grammar
	// of 2.3 before the planar rework. pylance 14 rejects it (see FORMAT.md).
	Format2_3Interim
)

func (f Format) String() string {
	switch f {
	case Format2_3:
		return "2.3"
	case Format2_2:
		return "2.2"
	case Format2_3Interim:
		return "2.3-interim"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat accepts "2.3", "2.2" and "2.3-interim".
func ParseFormat(s string) (Format, error) {
	for _, f := range []Format{Format2_3, Format2_2, Format2_3Interim} {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("format %q (want 2.3, 2.2 or 2.3-interim): %w", s, ErrInvalidOption)
}

func (f Format) footerVersion() (uint16, uint16) {
	if f == Format2_2 {
		return 2, 2
	}
	return 2, 3
}

func (f Format) planarMetadata() bool { return f == Format2_3 }

// DefaultMaxPageBytes is the default page budget per column: 8 MiB, the page
// size Lance's own writer produces (it emits a page whenever a column has
// buffered 8 MiB).
const DefaultMaxPageBytes = 8 << 20

type config struct {
	format       Format
	maxPageBytes int64
	columnOpts   []columnOpts
	policy       selector.Policy
	weights      selector.Weights
	// concurrency is the number of goroutines encoding pages (0: GOMAXPROCS)
	// and pagesInFlight how many pages may be cut and not yet written (0:
	// twice the concurrency).
	concurrency, pagesInFlight int
}

// WithConcurrency sets how many goroutines measure, select and encode pages
// (default GOMAXPROCS). With 1, pages are encoded on the goroutine that
// calls WriteBatch and Close. The file's bytes do not depend on it.
func WithConcurrency(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("concurrency %d: %w", n, ErrInvalidOption)
		}
		c.concurrency = n
		return nil
	}
}

// WithPagesInFlight caps the pages that are cut and not yet written (default
// twice the concurrency): the writer's memory is about that many pages' Arrow
// data and encoded buffers. When the cap is reached, WriteBatch waits for the
// oldest page and writes it.
func WithPagesInFlight(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("pages in flight %d: %w", n, ErrInvalidOption)
		}
		c.pagesInFlight = n
		return nil
	}
}

// Option configures a Writer.
type Option func(*config) error

// WithFormat selects the output format. The default is Format2_2, as in
// Lance's file writer, pylance's write_dataset and LanceDB: 2.2 is the
// newest storage version every current reader reads (pylance 14, and
// LanceDB 0.40 with its Lance 13). Format2_3, the planar page layout with
// its sparse cells, is read by pylance 14 only; Lance 14 calls it unstable
// (files may not be readable by later versions) and LanceDB 0.40 reads no
// 2.3 file. Choosing it logs that warning once per process.
func WithFormat(f Format) Option {
	return func(c *config) error {
		switch f {
		case Format2_3, Format2_2, Format2_3Interim:
			c.format = f
			return nil
		}
		return fmt.Errorf("format %d: %w", int(f), ErrInvalidOption)
	}
}

// WithMaxPageBytes sets the budget of raw value bytes per page and column
// (default DefaultMaxPageBytes). Pages never split a row.
func WithMaxPageBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("max page bytes %d must be positive: %w", n, ErrInvalidOption)
		}
		c.maxPageBytes = n
		return nil
	}
}

// WithColumnOptions sets per-column encoding options from Go, with the same
// keys and values as Lance field metadata (selector.Key*, e.g.
// "lance-encoding:compression": "zstd"). path names a leaf column by its
// dotted path ("a.b", "tags.item") or every leaf below a field ("a"). Options
// set here override the field's metadata. An unknown path, key or value fails
// New with an error naming the field and key.
func WithColumnOptions(path string, kv map[string]string) Option {
	return func(c *config) error {
		if path == "" {
			return fmt.Errorf("column options with an empty path: %w", ErrInvalidOption)
		}
		c.columnOpts = append(c.columnOpts, columnOpts{path: path, kv: kv})
		return nil
	}
}

type columnOpts struct {
	path string
	kv   map[string]string
}

func (o columnOpts) matches(path string) bool {
	return path == o.path || strings.HasPrefix(path, o.path+".")
}

// selectorOptions resolves a leaf column's options: the metadata of every
// field on its path (outer first), then WithColumnOptions in call order.
func selectorOptions(path string, fields []arrow.Field, info leafInfo, cfg *config) (selector.Options, error) {
	o := selector.Options{Policy: cfg.policy, Weights: cfg.weights}
	t := info.selectorType()
	set := func(kv map[string]string) error {
		keys := make([]string, 0, len(kv))
		for k := range kv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := o.Set(path, t, k, kv[k]); err != nil {
				return fmt.Errorf("%w (%w)", err, ErrInvalidOption)
			}
			if k == selector.KeyStructuralEncoding && o.Structural == selector.StructuralSparse && !cfg.format.planarMetadata() {
				err := &selector.OptionError{Field: path, Key: k, Value: kv[k], Reason: "sparse structure needs file format 2.3"}
				return fmt.Errorf("%w (%w)", err, ErrInvalidOption)
			}
		}
		return nil
	}
	for _, f := range fields {
		if !f.HasMetadata() {
			continue
		}
		kv := make(map[string]string, f.Metadata.Len())
		for i, k := range f.Metadata.Keys() {
			kv[k] = f.Metadata.Values()[i]
		}
		if err := set(kv); err != nil {
			return o, err
		}
	}
	for _, co := range cfg.columnOpts {
		if co.matches(path) {
			if err := set(co.kv); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// WithPolicy selects how pages' codecs are chosen: selector.PolicyCost (the
// default: Lance's candidates plus general compression, judged by bytes +
// λ·read cost) or selector.PolicyLance (Lance's own rules).
func WithPolicy(p selector.Policy) Option {
	return func(c *config) error {
		switch p {
		case selector.PolicyCost, selector.PolicyLance:
			c.policy = p
			return nil
		}
		return fmt.Errorf("policy %d: %w", int(p), ErrInvalidOption)
	}
}

// WithCostWeights sets the cost model's weights (selector.Weights: Lambda
// for read cost, Mu for write cost; 0 means the default, negative means the
// term is left out). NaN and infinite weights fail New with ErrInvalidOption.
func WithCostWeights(w selector.Weights) Option {
	return func(c *config) error {
		if math.IsNaN(w.Lambda) || math.IsNaN(w.Mu) || math.IsInf(w.Lambda, 0) || math.IsInf(w.Mu, 0) {
			return fmt.Errorf("cost weights %+v must be finite: %w", w, ErrInvalidOption)
		}
		c.weights = w
		return nil
	}
}

var unstableOnce sync.Once

// warnUnstable logs, once per process, what Lance says of storage 2.3.
func warnUnstable(f Format) {
	unstableOnce.Do(func() {
		slog.Warn("planar: Lance storage format "+f.String()+" is unstable in Lance 14: its files may not be readable by later Lance versions, and LanceDB 0.40 (Lance 13) reads none; write 2.2 (the default) for data others read",
			"format", f.String())
	})
}
