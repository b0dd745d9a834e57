package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/structural"
)

// ErrUnsupportedType is wrapped when an Arrow type has no Lance logical type
// (or a logical type string names no Arrow type).
var ErrUnsupportedType = errors.New("planar: unsupported type")

// Column is one physical column: a leaf of the schema tree.
type Column struct {
	Path  string      // dotted path from the top-level field, e.g. "a.b.item"
	Field arrow.Field // the leaf's Arrow field
	ID    int32       // Lance field id
	// Top is the index of the column's top-level field, Steps the
	// structural path from it to the leaf (as structural.LeafPathsField
	// gives it), and Leaf, Leaves the column's place among that field's
	// columns.
	Top, Leaf, Leaves int
	Steps             []structural.Step
}

// ElementsPerRow is how many elements a page of the column counts per
// row: the product of the structural fixed-size-list dimensions on its
// path.
func (c Column) ElementsPerRow() int { return structural.ElementsPerRow(c.Steps) }

// placeColumns fills in each column's structural path (cols come from a
// walk of the Lance field tree, with Top set).
// The Lance field tree and the structural plane must see the same leaves
// in the same order; this is the one place that holds them side by side,
// and a schema on which they differ is refused here.
func placeColumns(fields []arrow.Field, cols []Column) error {
	k := 0
	for ti, f := range fields {
		paths := structural.LeafPathsField(f)
		for j, p := range paths {
			if k >= len(cols) || cols[k].Top != ti {
				return fmt.Errorf("field %q: its %d structural leaves are not its Lance leaf columns: %w", f.Name, len(paths), ErrUnsupportedType)
			}
			cols[k].Top, cols[k].Leaf, cols[k].Leaves, cols[k].Steps = ti, j, len(paths), p
			k++
		}
	}
	if k != len(cols) {
		return fmt.Errorf("schema has %d leaf columns, %d structural leaves: %w", len(cols), k, ErrUnsupportedType)
	}
	return nil
}

// SchemaToLance converts an Arrow schema to Lance's flattened field list
// (pre-order, ids from 0, parent -1 for top-level fields) and lists the
// physical columns in column-index order.
func SchemaToLance(s *arrow.Schema) (*filepb.Schema, []Column, error) {
	out := &filepb.Schema{}
	if md := s.Metadata(); md.Len() > 0 {
		out.Metadata = make(map[string][]byte, md.Len())
		for i, k := range md.Keys() {
			out.Metadata[k] = []byte(md.Values()[i])
		}
	}
	var cols []Column
	var next int32
	top := 0
	var walk func(f arrow.Field, parent int32, path string) error
	walk = func(f arrow.Field, parent int32, path string) error {
		lt, err := LogicalType(f.Type)
		if err != nil {
			return fmt.Errorf("field %q: %w", path, err)
		}
		pf := &filepb.Field{
			Name:        f.Name,
			Id:          next,
			ParentId:    parent,
			LogicalType: lt,
			Nullable:    f.Nullable,
			Encoding:    encodingHint(f.Type),
		}
		next++
		if f.Metadata.Len() > 0 {
			pf.Metadata = make(map[string][]byte, f.Metadata.Len())
			for i, k := range f.Metadata.Keys() {
				pf.Metadata[k] = []byte(f.Metadata.Values()[i])
				if k == "ARROW:extension:name" {
					pf.ExtensionName = f.Metadata.Values()[i]
				}
			}
		}
		out.Fields = append(out.Fields, pf)
		children := lanceChildren(f.Type)
		if structural.Packed(f) {
			// One column holds the whole struct; its children are fields
			// of the schema without columns of their own.
			cols = append(cols, Column{Path: path, Field: f, ID: pf.Id, Top: top})
			saved := len(cols)
			for _, c := range children {
				if err := walk(c, pf.Id, path+"."+c.Name); err != nil {
					return err
				}
			}
			cols = cols[:saved]
			return nil
		}
		if len(children) == 0 {
			cols = append(cols, Column{Path: path, Field: f, ID: pf.Id, Top: top})
			return nil
		}
		for _, c := range children {
			if err := walk(c, pf.Id, path+"."+c.Name); err != nil {
				return err
			}
		}
		return nil
	}
	for ti, f := range s.Fields() {
		top = ti
		if strings.Contains(f.Name, ".") {
			return nil, nil, fmt.Errorf("top-level field name %q contains '.': %w", f.Name, ErrUnsupportedType)
		}
		if err := walk(f, -1, f.Name); err != nil {
			return nil, nil, err
		}
	}
	if err := placeColumns(s.Fields(), cols); err != nil {
		return nil, nil, err
	}
	return out, cols, nil
}

// lanceChildren returns the children a type has in the Lance schema tree.
// Fixed-size lists of primitives encode their child in the type string and
// have none.
func lanceChildren(dt arrow.DataType) []arrow.Field {
	switch t := dt.(type) {
	case *arrow.StructType:
		return t.Fields()
	case *arrow.ListType:
		return []arrow.Field{t.ElemField()}
	case *arrow.LargeListType:
		return []arrow.Field{t.ElemField()}
	case *arrow.MapType:
		return []arrow.Field{t.ElemField()}
	case *arrow.FixedSizeListType:
		if t.Elem().ID() == arrow.STRUCT {
			return []arrow.Field{t.ElemField()}
		}
	}
	return nil
}

func encodingHint(dt arrow.DataType) filepb.Encoding {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return filepb.Encoding_VAR_BINARY
	case arrow.DICTIONARY:
		return filepb.Encoding_DICTIONARY
	case arrow.STRUCT, arrow.NULL:
		return filepb.Encoding_NONE
	}
	return filepb.Encoding_PLAIN
}

var unitNames = map[arrow.TimeUnit]string{arrow.Second: "s", arrow.Millisecond: "ms", arrow.Microsecond: "us", arrow.Nanosecond: "ns"}

func parseUnit(s string) (arrow.TimeUnit, bool) {
	for u, n := range unitNames {
		if n == s {
			return u, true
		}
	}
	return 0, false
}

// LogicalType returns Lance's logical type string for an Arrow type.
func LogicalType(dt arrow.DataType) (string, error) {
	switch t := dt.(type) {
	case *arrow.NullType:
		return "null", nil
	case *arrow.BooleanType:
		return "bool", nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type:
		return t.Name(), nil
	case *arrow.Float16Type:
		return "halffloat", nil
	case *arrow.Float32Type:
		return "float", nil
	case *arrow.Float64Type:
		return "double", nil
	case *arrow.StringType:
		return "string", nil
	case *arrow.LargeStringType:
		return "large_string", nil
	case *arrow.BinaryType:
		return "binary", nil
	case *arrow.LargeBinaryType:
		return "large_binary", nil
	case *arrow.FixedSizeBinaryType:
		return "fixed_size_binary:" + strconv.Itoa(t.ByteWidth), nil
	case *arrow.Date32Type:
		return "date32:day", nil
	case *arrow.Date64Type:
		return "date64:ms", nil
	case *arrow.Time32Type:
		return "time32:" + unitNames[t.Unit], nil
	case *arrow.Time64Type:
		return "time64:" + unitNames[t.Unit], nil
	case *arrow.TimestampType:
		tz := t.TimeZone
		if tz == "" {
			tz = "-"
		}
		return "timestamp:" + unitNames[t.Unit] + ":" + tz, nil
	case *arrow.DurationType:
		return "duration:" + unitNames[t.Unit], nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal:128:%d:%d", t.Precision, t.Scale), nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal:256:%d:%d", t.Precision, t.Scale), nil
	case *arrow.StructType:
		return "struct", nil
	case *arrow.ListType:
		if t.Elem().ID() == arrow.STRUCT {
			return "list.struct", nil
		}
		return "list", nil
	case *arrow.LargeListType:
		if t.Elem().ID() == arrow.STRUCT {
			return "large_list.struct", nil
		}
		return "large_list", nil
	case *arrow.FixedSizeListType:
		if t.Elem().ID() == arrow.STRUCT {
			return fmt.Sprintf("fixed_size_list:struct:%d", t.Len()), nil
		}
		if len(lanceChildren(t.Elem())) > 0 {
			return "", fmt.Errorf("fixed_size_list of %s: %w", t.Elem(), ErrUnsupportedType)
		}
		child, err := LogicalType(t.Elem())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("fixed_size_list:%s:%d", child, t.Len()), nil
	case *arrow.MapType:
		if t.KeysSorted {
			return "", fmt.Errorf("map with sorted keys: %w", ErrUnsupportedType)
		}
		return "map", nil
	case *arrow.DictionaryType:
		v, err := LogicalType(t.ValueType)
		if err != nil {
			return "", err
		}
		k, err := LogicalType(t.IndexType)
		if err != nil {
			return "", err
		}
		if strings.Contains(v, ":") {
			return "", fmt.Errorf("dictionary of %s (Lance cannot parse its type string back): %w", t.ValueType, ErrUnsupportedType)
		}
		return "dict:" + v + ":" + k + ":false", nil
	}
	return "", fmt.Errorf("%s: %w", dt, ErrUnsupportedType)
}

var simpleTypes = map[string]arrow.DataType{
	"null": arrow.Null, "bool": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16,
	"int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
	"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"halffloat": arrow.FixedWidthTypes.Float16, "float": arrow.PrimitiveTypes.Float32,
	"double": arrow.PrimitiveTypes.Float64, "string": arrow.BinaryTypes.String,
	"large_string": arrow.BinaryTypes.LargeString, "binary": arrow.BinaryTypes.Binary,
	"large_binary": arrow.BinaryTypes.LargeBinary, "date32:day": arrow.FixedWidthTypes.Date32,
	"date64:ms": arrow.FixedWidthTypes.Date64,
	"time32:s":  arrow.FixedWidthTypes.Time32s, "time32:ms": arrow.FixedWidthTypes.Time32ms,
	"time64:us": arrow.FixedWidthTypes.Time64us, "time64:ns": arrow.FixedWidthTypes.Time64ns,
	"duration:s": arrow.FixedWidthTypes.Duration_s, "duration:ms": arrow.FixedWidthTypes.Duration_ms,
	"duration:us": arrow.FixedWidthTypes.Duration_us, "duration:ns": arrow.FixedWidthTypes.Duration_ns,
}

// ParseLogicalType returns the Arrow type of a logical type string; children
// are the field's children in the Lance schema tree.
func ParseLogicalType(s string, children []arrow.Field) (arrow.DataType, error) {
	if t, ok := simpleTypes[s]; ok {
		return t, nil
	}
	bad := func() (arrow.DataType, error) {
		return nil, fmt.Errorf("logical type %q: %w", s, ErrUnsupportedType)
	}
	one := func() (arrow.Field, bool) {
		if len(children) != 1 {
			return arrow.Field{}, false
		}
		return children[0], true
	}
	switch s {
	case "struct":
		return arrow.StructOf(children...), nil
	case "list", "list.struct":
		c, ok := one()
		if !ok {
			return bad()
		}
		return arrow.ListOfField(c), nil
	case "large_list", "large_list.struct":
		c, ok := one()
		if !ok {
			return bad()
		}
		return arrow.LargeListOfField(c), nil
	case "map":
		c, ok := one()
		if !ok {
			return bad()
		}
		st, ok := c.Type.(*arrow.StructType)
		if !ok || st.NumFields() != 2 {
			return bad()
		}
		m := arrow.MapOfWithMetadata(st.Field(0).Type, st.Field(0).Metadata, st.Field(1).Type, st.Field(1).Metadata)
		return m, nil
	}
	parts := strings.Split(s, ":")
	switch parts[0] {
	case "timestamp":
		if len(parts) < 3 {
			return bad()
		}
		u, ok := parseUnit(parts[1])
		if !ok {
			return bad()
		}
		tz := strings.Join(parts[2:], ":")
		if tz == "-" {
			tz = ""
		}
		return &arrow.TimestampType{Unit: u, TimeZone: tz}, nil
	case "fixed_size_binary":
		if len(parts) != 2 {
			return bad()
		}
		n, err := strconv.Atoi(parts[1])
		if err != nil || n <= 0 {
			return bad()
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: n}, nil
	case "decimal":
		if len(parts) != 4 {
			return bad()
		}
		p, err1 := strconv.Atoi(parts[2])
		sc, err2 := strconv.Atoi(parts[3])
		if err1 != nil || err2 != nil {
			return bad()
		}
		switch parts[1] {
		case "128":
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(sc)}, nil
		case "256":
			return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(sc)}, nil
		}
		return bad()
	case "fixed_size_list":
		if len(parts) < 3 {
			return bad()
		}
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil || n <= 0 {
			return bad()
		}
		inner := strings.Join(parts[1:len(parts)-1], ":")
		if inner == "struct" {
			c, ok := one()
			if !ok {
				return bad()
			}
			return arrow.FixedSizeListOfField(int32(n), c), nil
		}
		ct, err := ParseLogicalType(inner, nil)
		if err != nil {
			return nil, err
		}
		return arrow.FixedSizeListOf(int32(n), ct), nil
	case "dict":
		if len(parts) != 4 {
			return bad()
		}
		v, err := ParseLogicalType(parts[1], nil)
		if err != nil {
			return nil, err
		}
		k, err := ParseLogicalType(parts[2], nil)
		if err != nil {
			return nil, err
		}
		return &arrow.DictionaryType{IndexType: k, ValueType: v}, nil
	}
	return bad()
}

// SchemaFromLance rebuilds the Arrow schema from Lance's flattened field list
// and lists the physical columns in column-index order.
func SchemaFromLance(ps *filepb.Schema) (*arrow.Schema, []Column, error) {
	type node struct {
		f        *filepb.Field
		children []*node
	}
	byID := map[int32]*node{}
	var roots []*node
	for i, f := range ps.GetFields() {
		if f == nil {
			return nil, nil, fmt.Errorf("schema field %d is empty: %w", i, ErrCorruptFile)
		}
		n := &node{f: f}
		if _, dup := byID[f.Id]; dup {
			return nil, nil, fmt.Errorf("duplicate field id %d: %w", f.Id, ErrCorruptFile)
		}
		if f.ParentId == -1 {
			byID[f.Id] = n
			roots = append(roots, n)
			continue
		}
		p, ok := byID[f.ParentId]
		if !ok {
			return nil, nil, fmt.Errorf("field %q names parent %d that does not precede it: %w", f.Name, f.ParentId, ErrCorruptFile)
		}
		byID[f.Id] = n
		p.children = append(p.children, n)
	}
	var cols []Column
	top := 0
	var build func(n *node, path string, depth int) (arrow.Field, error)
	build = func(n *node, path string, depth int) (arrow.Field, error) {
		if depth > 64 {
			return arrow.Field{}, fmt.Errorf("schema nested too deep: %w", ErrCorruptFile)
		}
		var kids []arrow.Field
		at := len(cols)
		for _, c := range n.children {
			k, err := build(c, path+"."+c.f.Name, depth+1)
			if err != nil {
				return arrow.Field{}, err
			}
			kids = append(kids, k)
		}
		dt, err := ParseLogicalType(n.f.LogicalType, kids)
		if err != nil {
			return arrow.Field{}, fmt.Errorf("field %q: %w", path, err)
		}
		var md arrow.Metadata
		if len(n.f.Metadata) > 0 || n.f.ExtensionName != "" {
			m := make(map[string]string, len(n.f.Metadata)+1)
			for k, v := range n.f.Metadata {
				m[k] = string(v)
			}
			if n.f.ExtensionName != "" {
				m["ARROW:extension:name"] = n.f.ExtensionName
			}
			md = arrow.MetadataFrom(m)
		}
		f := arrow.Field{Name: n.f.Name, Type: dt, Nullable: n.f.Nullable, Metadata: md}
		if len(n.children) == 0 || structural.Packed(f) {
			// A packed struct is one column: drop its children's.
			cols = append(cols[:at], Column{Path: path, Field: f, ID: n.f.Id, Top: top})
		}
		return f, nil
	}
	fields := make([]arrow.Field, 0, len(roots))
	for ti, r := range roots {
		top = ti
		f, err := build(r, r.f.Name, 0)
		if err != nil {
			return nil, nil, err
		}
		fields = append(fields, f)
	}
	var md *arrow.Metadata
	if len(ps.GetMetadata()) > 0 {
		m := make(map[string]string, len(ps.Metadata))
		for k, v := range ps.Metadata {
			m[k] = string(v)
		}
		mm := arrow.MetadataFrom(m)
		md = &mm
	}
	if err := placeColumns(fields, cols); err != nil {
		return nil, nil, fmt.Errorf("%w (%w)", err, ErrCorruptFile)
	}
	return arrow.NewSchema(fields, md), cols, nil
}
