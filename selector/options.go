package selector

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/planarlance/planar/values"
)

// Field-metadata keys planar honours, spelled exactly as Lance defines them,
// with the values each accepts. Set them as an Arrow field's metadata or
// with writer.WithColumnOptions; a value outside these fails writer.New with
// an OptionError naming the field, key and value.
const (
	// KeyStructuralEncoding: "miniblock" (dense x chunked), "fullzip"
	// (dense x zipped; not booleans) or "sparse" (sparse structure, format
	// 2.3 only). Default: the selector's choice.
	KeyStructuralEncoding = "lance-encoding:structural-encoding"
	// KeyCompression: "none", "lz4", "zstd" or "fsst" (strings only).
	KeyCompression = "lance-encoding:compression"
	// KeyCompressionLevel: a zstd level, an integer in -7..22.
	KeyCompressionLevel = "lance-encoding:compression-level"
	// KeyRleThreshold: a fraction in [0, 1]; RLE only when runs < values x
	// threshold (0 turns RLE off).
	KeyRleThreshold = "lance-encoding:rle-threshold"
	// KeyDictDivisor: a positive integer; a page is dictionary encoded only
	// with at most values/divisor distinct values (default 2).
	KeyDictDivisor = "lance-encoding:dict-divisor"
	// KeyDictSizeRatio: a ratio in (0, 1]; dictionary plus indices must be
	// under this fraction of the plain size (default 0.8).
	KeyDictSizeRatio = "lance-encoding:dict-size-ratio"
	// KeyBSS: "auto", "on" (32- or 64-bit fixed-width values) or "off":
	// byte stream split of floats.
	KeyBSS = "lance-encoding:bss"
	// KeyDictValuesCompression: "none", "lz4" or "zstd", for dictionary
	// items.
	KeyDictValuesCompression = "lance-encoding:dict-values-compression"
	// KeyMinichunkSize: a byte count in 1..2^31-1; accepted for Lance
	// compatibility, planar cuts chunks by its own rules.
	KeyMinichunkSize = "lance-encoding:minichunk-size"
	// KeyDictMaxSize: a byte count in 0..2^31-1 bounding a dictionary's
	// values (default 8 MiB; 0: no dictionary).
	KeyDictMaxSize = "lance-encoding:dict-max-size"
	// KeyPacked: "true" or "false" (also 1/0, on/off, yes/no) on a struct:
	// stored as one column of packed rows.
	KeyPacked = "lance-encoding:packed"
	// KeyBlob marks a v1 blob column (Lance's lance-encoding:blob); "true"
	// is refused, format 2.3 stores blobs as blob v2 structs.
	KeyBlob = "lance-encoding:blob"
	// KeyCodec is planar's own key: it forces one value codec of a
	// fixed-width column: "flat", "bitpack", "rle" or "bss".
	KeyCodec = "planar:codec"
	// KeyStringWindows ("on"/"off", default off) lets the cost policy weigh
	// Zstd over large chunks (the key says "windows") of string values:
	// smaller files, slower takes (a one-row take decodes a whole 64 KiB
	// chunk).
	KeyStringWindows = "planar:string-windows"
)

// ErrInvalidOption is wrapped by every error about an option value.
var ErrInvalidOption = errors.New("planar/selector: invalid column option")

// Structural is a forced structural encoding.
type Structural int

// Structural encodings.
const (
	StructuralAuto Structural = iota
	// StructuralMiniBlock forces dense x chunked (and no automatic sparse).
	StructuralMiniBlock
	// StructuralFullZip forces dense x zipped (and no automatic sparse).
	StructuralFullZip
	// StructuralSparse forces sparse structure on every page whose
	// structure is not trivial (format 2.3 only).
	StructuralSparse
)

// CompressionMode is the lance-encoding:compression value.
type CompressionMode int

// Compression modes.
const (
	CompressionAuto CompressionMode = iota
	CompressionNone
	CompressionLZ4
	CompressionZstd
	CompressionFsst
)

// BSSMode is the lance-encoding:bss value.
type BSSMode int

// Byte stream split modes.
const (
	BSSAuto BSSMode = iota
	BSSOn
	BSSOff
)

// Options are the per-column knobs the selector honours. The zero value is
// the default of every knob.
type Options struct {
	// StringWindows admits window candidates for string values (KeyStringWindows).
	StringWindows bool
	Structural    Structural
	Compression   CompressionMode
	Level         int // zstd level (0 = default)
	// RleThreshold, when > 0, admits RLE only when runs < values·threshold
	// (Lance's rle-threshold); 0 leaves RLE to the size estimate.
	RleThreshold float64
	// DictDivisor: a page is dictionary encoded only with at most
	// values/DictDivisor distinct values (default 2).
	DictDivisor int
	// DictSizeRatio: dictionary plus indices must be under this fraction of
	// the raw size (default 0.8).
	DictSizeRatio float64
	BSS           BSSMode
	// DictItems compresses page dictionary items: 0 = LZ4 when it helps
	// (Lance's default), CompressionNone, CompressionLZ4 or CompressionZstd.
	DictItems CompressionMode
	// DictMaxBytes bounds the dictionary's value bytes (0 = 8 MiB; negative
	// = 0 bytes, what lance-encoding:dict-max-size=0 sets).
	DictMaxBytes int
	// Policy and Weights are writer-wide (writer.WithPolicy,
	// writer.WithCostWeights).
	Policy  Policy
	Weights Weights
	// Codec forces one value codec of fixed-width columns: "flat",
	// "bitpack", "rle" or "bss" ("" lets the selector choose).
	Codec string
}

func (o Options) generalScheme() values.Scheme {
	switch o.Compression {
	case CompressionLZ4:
		return values.SchemeLZ4
	case CompressionZstd:
		return values.SchemeZstd
	}
	return 0
}

// compressionNames are the metadata values of the compression modes
// ("" for CompressionAuto).
var compressionNames = [...]string{CompressionNone: "none", CompressionLZ4: "lz4", CompressionZstd: "zstd", CompressionFsst: "fsst"}

// Asked lists the knobs a column's metadata set (as "key=value", the
// lance-encoding: prefix left out), "" when it set none: the report's
// reasons start with them, so that what was asked and what was done read
// side by side.
func (o Options) Asked() string {
	var a []string
	switch o.Structural {
	case StructuralMiniBlock:
		a = append(a, "structural-encoding=miniblock")
	case StructuralFullZip:
		a = append(a, "structural-encoding=fullzip")
	case StructuralSparse:
		a = append(a, "structural-encoding=sparse")
	}
	if c := compressionNames[o.Compression]; c != "" {
		a = append(a, "compression="+c)
	}
	if o.Level != 0 {
		a = append(a, fmt.Sprintf("compression-level=%d", o.Level))
	}
	if c := compressionNames[o.DictItems]; c != "" {
		a = append(a, "dict-values-compression="+c)
	}
	switch o.BSS {
	case BSSOn:
		a = append(a, "bss=on")
	case BSSOff:
		a = append(a, "bss=off")
	}
	if o.RleThreshold > 0 {
		a = append(a, fmt.Sprintf("rle-threshold=%g", o.RleThreshold))
	}
	if o.DictDivisor > 0 {
		a = append(a, fmt.Sprintf("dict-divisor=%d", o.DictDivisor))
	}
	if o.DictSizeRatio > 0 {
		a = append(a, fmt.Sprintf("dict-size-ratio=%g", o.DictSizeRatio))
	}
	if o.DictMaxBytes != 0 {
		a = append(a, fmt.Sprintf("dict-max-size=%d", max(o.DictMaxBytes, 0)))
	}
	if o.Codec != "" {
		a = append(a, "planar:codec="+o.Codec)
	}
	if o.StringWindows {
		a = append(a, "planar:string-windows=on")
	}
	return strings.Join(a, ", ")
}

func (o Options) allows(codec string) bool { return o.Codec == "" || o.Codec == codec }

func (o Options) rleAllowed(runs, n int) bool {
	if o.RleThreshold <= 0 {
		return true
	}
	return float64(runs) < float64(n)*o.RleThreshold
}

// DictLimits returns the dictionary divisor and size ratio in effect.
func (o Options) DictLimits() (divisor int, ratio float64) {
	divisor, ratio = 2, 0.8
	if o.DictDivisor > 0 {
		divisor = o.DictDivisor
	}
	if o.DictSizeRatio > 0 {
		ratio = o.DictSizeRatio
	}
	return divisor, ratio
}

// Type is what ParseMetadata needs to know about a column's leaf type to
// reject options it cannot honour.
type Type struct {
	Fixed    bool // fixed-width values (integers, floats, temporal)
	Bits     int
	Float    bool
	Variable bool // strings and binary
	UTF8     bool
	Bool     bool
}

// OptionError names the field and key of a rejected option.
type OptionError struct {
	Field, Key, Value, Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("field %q: %s=%q: %s", e.Field, e.Key, e.Value, e.Reason)
}

func (e *OptionError) Unwrap() error { return ErrInvalidOption }

// Set applies one option, given as a Lance field-metadata key and value,
// checking it against the column type. Keys outside the lance-encoding:
// and planar: namespaces are ignored (they are the user's metadata).
func (o *Options) Set(field string, t Type, key, value string) error {
	bad := func(reason string, args ...any) error {
		return &OptionError{Field: field, Key: key, Value: value, Reason: fmt.Sprintf(reason, args...)}
	}
	switch key {
	case KeyStructuralEncoding:
		switch value {
		case "miniblock":
			o.Structural = StructuralMiniBlock
		case "fullzip":
			if t.Bool {
				return bad("booleans are not byte aligned and cannot be stored full-zip")
			}
			o.Structural = StructuralFullZip
		case "sparse":
			o.Structural = StructuralSparse
		default:
			return bad("want miniblock, fullzip or sparse")
		}
	case KeyCompression:
		switch value {
		case "none":
			o.Compression = CompressionNone
		case "lz4":
			o.Compression = CompressionLZ4
		case "zstd":
			o.Compression = CompressionZstd
		case "fsst":
			if !t.UTF8 {
				return bad("fsst applies to string columns only")
			}
			o.Compression = CompressionFsst
		default:
			return bad("want none, lz4, zstd or fsst")
		}
	case KeyCompressionLevel:
		l, err := strconv.Atoi(value)
		if err != nil || l < -7 || l > 22 {
			return bad("want an integer zstd level in -7..22")
		}
		o.Level = l
	case KeyRleThreshold:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f >= 0 && f <= 1) { // NaN fails both
			return bad("want a fraction in [0, 1]")
		}
		if f == 0 {
			f = 1e-300 // threshold 0: runs < 0 never holds, RLE is off
		}
		o.RleThreshold = f
	case KeyDictDivisor:
		d, err := strconv.Atoi(value)
		if err != nil || d < 1 {
			return bad("want a positive integer")
		}
		o.DictDivisor = d
	case KeyDictSizeRatio:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || !(f > 0 && f <= 1) { // NaN fails both
			return bad("want a ratio in (0, 1]")
		}
		o.DictSizeRatio = f
	case KeyBSS:
		switch value {
		case "auto":
			o.BSS = BSSAuto
		case "on":
			if !t.Fixed || (t.Bits != 32 && t.Bits != 64) {
				return bad("byte stream split needs 32- or 64-bit fixed-width values")
			}
			o.BSS = BSSOn
		case "off":
			o.BSS = BSSOff
		default:
			return bad("want auto, on or off")
		}
	case KeyDictValuesCompression:
		switch value {
		case "none":
			o.DictItems = CompressionNone
		case "lz4":
			o.DictItems = CompressionLZ4
		case "zstd":
			o.DictItems = CompressionZstd
		default:
			return bad("want none, lz4 or zstd")
		}
	case KeyDictMaxSize:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return bad("want a byte count in 0..%d", math.MaxInt32)
		}
		o.DictMaxBytes = int(n)
		if n == 0 {
			// Lance's limit of 0: no dictionary holds a non-empty value.
			o.DictMaxBytes = -1
		}
	case KeyMinichunkSize:
		// Accepted for compatibility; planar cuts chunks by its own rules.
		// The value is still checked as Lance would use it: a chunk size.
		if n, err := strconv.ParseInt(value, 10, 64); err != nil || n < 1 || n > math.MaxInt32 {
			return bad("want a byte count in 1..%d", math.MaxInt32)
		}
	case KeyPacked, "packed":
		// Honoured by the schema walk (structural.Packed): a struct marked
		// packed is one column. Here only the value is checked.
		switch strings.ToLower(value) {
		case "1", "true", "on", "yes", "y", "0", "false", "off", "no", "n":
		default:
			return bad("want true or false")
		}
	case KeyBlob:
		if value == "true" {
			return bad("blob v1 columns are closed in format 2.3; store blobs as blob v2 struct input")
		}
	case KeyStringWindows:
		switch value {
		case "on":
			o.StringWindows = true
		case "off":
			o.StringWindows = false
		default:
			return bad("want on or off")
		}
	case KeyCodec:
		switch value {
		case "flat":
		case "bitpack", "rle":
			if !t.Fixed || (t.Bits != 8 && t.Bits != 16 && t.Bits != 32 && t.Bits != 64) {
				return bad("%s needs 8-, 16-, 32- or 64-bit fixed-width values", value)
			}
		case "bss":
			if !t.Fixed || (t.Bits != 32 && t.Bits != 64) {
				return bad("byte stream split needs 32- or 64-bit fixed-width values")
			}
		default:
			return bad("want flat, bitpack, rle or bss")
		}
		o.Codec = value
	default:
		if len(key) > len("lance-encoding:") && key[:len("lance-encoding:")] == "lance-encoding:" {
			return bad("unknown lance-encoding key")
		}
		if len(key) > len("planar:") && key[:len("planar:")] == "planar:" {
			return bad("unknown planar key")
		}
	}
	return nil
}
