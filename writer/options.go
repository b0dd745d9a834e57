package writer

import (
	"fmt"
)

// Format selects the file version and the flavour of page metadata.
type Format int

const (
	// Format2_3 writes footer 2.3 and planar page metadata
	// (/lance.encodings23.PlanarLayout). This is the default.
	Format2_3 Format = iota
	// Format2_2 writes footer 2.2 and pb21 page metadata
	// (/lance.encodings21.PageLayout), readable by every current Lance.
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
}

// Option configures a Writer.
type Option func(*config) error

// WithFormat selects the output format (default Format2_3).
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
