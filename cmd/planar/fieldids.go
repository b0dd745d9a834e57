package main

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// pqarrow gives every field it reads the metadata "PARQUET:field_id", "-1"
// when the Parquet file assigns no field ids. Such entries say nothing and
// would be stored in the Lance schema of every field; they are dropped here,
// from top-level fields and from the child fields inside list, fixed-size
// list and struct types (the batches are relabelled with the new types,
// sharing their buffers).

const parquetFieldID = "PARQUET:field_id"

// noFieldIDs returns the schema without unassigned Parquet field ids, and
// whether anything changed.
func noFieldIDs(s *arrow.Schema) (*arrow.Schema, bool) {
	fields := s.Fields()
	changed := false
	for i := range fields {
		var c bool
		fields[i], c = stripField(fields[i])
		changed = changed || c
	}
	if !changed {
		return s, false
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md), true
}

func stripField(f arrow.Field) (arrow.Field, bool) {
	changed := false
	if v, ok := f.Metadata.GetValue(parquetFieldID); ok && v == "-1" {
		var keys, vals []string
		for i, k := range f.Metadata.Keys() {
			if k != parquetFieldID {
				keys, vals = append(keys, k), append(vals, f.Metadata.Values()[i])
			}
		}
		f.Metadata = arrow.NewMetadata(keys, vals)
		changed = true
	}
	t, c := stripType(f.Type)
	f.Type = t
	return f, changed || c
}

func stripType(dt arrow.DataType) (arrow.DataType, bool) {
	switch t := dt.(type) {
	case *arrow.ListType:
		if e, c := stripField(t.ElemField()); c {
			return arrow.ListOfField(e), true
		}
	case *arrow.LargeListType:
		if e, c := stripField(t.ElemField()); c {
			return arrow.LargeListOfField(e), true
		}
	case *arrow.FixedSizeListType:
		if e, c := stripField(t.ElemField()); c {
			return arrow.FixedSizeListOfField(t.Len(), e), true
		}
	case *arrow.StructType:
		fields := t.Fields()
		changed := false
		for i := range fields {
			var c bool
			fields[i], c = stripField(fields[i])
			changed = changed || c
		}
		if changed {
			return arrow.StructOf(fields...), true
		}
	}
	return dt, false
}

// relabel gives a's data the type dt, which differs from a's only in field
// names' metadata; buffers are shared.
func relabel(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	if arrow.TypeEqual(d.DataType(), dt, arrow.CheckMetadata()) {
		d.Retain()
		return d
	}
	kids := d.Children()
	var nk []arrow.ArrayData
	switch t := dt.(type) {
	case arrow.ListLikeType:
		nk = []arrow.ArrayData{relabel(kids[0], t.Elem())}
	case *arrow.StructType:
		for i, k := range kids {
			nk = append(nk, relabel(k, t.Field(i).Type))
		}
	default:
		nk = kids
		for _, k := range nk {
			k.Retain()
		}
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), nk, d.NullN(), d.Offset())
	for _, k := range nk {
		k.Release()
	}
	return out
}
