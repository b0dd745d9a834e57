package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/tablepb"
)

// FragmentMetadata describes a fragment written by WriteFragments (or by
// pylance's lance.fragment.write_fragments) and not yet committed. It
// marshals to and from the JSON of pylance's FragmentMetadata.to_json and
// from_json, so fragments can move between Go and Python workers. ID is
// assigned at commit; written fragments carry 0.
type FragmentMetadata struct {
	ID           uint64
	Files        []DataFile
	PhysicalRows uint64
	// DeletionFile is the fragment's deletion file (Dataset.Fragments of a
	// table with deleted rows); fragments to commit have none.
	DeletionFile *DeletionFile
}

// DataFile is one data file of a fragment, under the dataset's data/
// folder. Fields are the leaf field ids the file stores, ColumnIndices where
// each is in the file. FileSizeBytes is 0 when unknown.
type DataFile struct {
	Path             string
	Fields           []int32
	ColumnIndices    []int32
	FileMajorVersion uint32
	FileMinorVersion uint32
	FileSizeBytes    uint64
}

// jsonDataFile and jsonFragment give the keys in pylance's order.
type jsonDataFile struct {
	Fields           []int32 `json:"fields"`
	ColumnIndices    []int32 `json:"column_indices"`
	FileMajorVersion uint32  `json:"file_major_version"`
	FileMinorVersion uint32  `json:"file_minor_version"`
	FileSizeBytes    *uint64 `json:"file_size_bytes"`
	BaseID           *uint32 `json:"base_id"`
	Path             string  `json:"path"`
}

type jsonFragment struct {
	ID                       uint64            `json:"id"`
	Files                    []jsonDataFile    `json:"files"`
	Overlays                 []json.RawMessage `json:"overlays"`
	PhysicalRows             uint64            `json:"physical_rows"`
	DeletionFile             json.RawMessage   `json:"deletion_file"`
	RowIDMeta                json.RawMessage   `json:"row_id_meta"`
	CreatedAtVersionMeta     json.RawMessage   `json:"created_at_version_meta"`
	LastUpdatedAtVersionMeta json.RawMessage   `json:"last_updated_at_version_meta"`
}

var jsonNull = json.RawMessage("null")

// jsonDeletionFile is pylance's deletion_file, keys in its order.
type jsonDeletionFile struct {
	ReadVersion    uint64  `json:"read_version"`
	ID             uint64  `json:"id"`
	FileType       string  `json:"file_type"`
	NumDeletedRows uint64  `json:"num_deleted_rows"`
	BaseID         *uint32 `json:"base_id"`
}

// MarshalJSON writes the fragment as pylance's FragmentMetadata.to_json.
func (f FragmentMetadata) MarshalJSON() ([]byte, error) {
	j := jsonFragment{
		ID: f.ID, Files: make([]jsonDataFile, len(f.Files)), Overlays: []json.RawMessage{},
		PhysicalRows: f.PhysicalRows, DeletionFile: jsonNull, RowIDMeta: jsonNull,
		CreatedAtVersionMeta: jsonNull, LastUpdatedAtVersionMeta: jsonNull,
	}
	if df := f.DeletionFile; df != nil {
		kind := "array"
		if df.Bitmap {
			kind = "bitmap"
		}
		b, err := json.Marshal(jsonDeletionFile{ReadVersion: df.ReadVersion, ID: df.ID, FileType: kind, NumDeletedRows: df.NumDeletedRows})
		if err != nil {
			return nil, err
		}
		j.DeletionFile = b
	}
	for i, d := range f.Files {
		j.Files[i] = d.toJSON()
	}
	return json.Marshal(j)
}

// MarshalJSON writes the data file as pylance's DataFile (the entries of
// FragmentMetadata.to_json's "files"; lance.fragment.DataFile takes the same
// values), so a BackfillResult's file is what pylance's
// LanceOperation.Merge is given.
func (d DataFile) MarshalJSON() ([]byte, error) { return json.Marshal(d.toJSON()) }

// UnmarshalJSON reads pylance's form of a data file. A data file in another
// base path is ErrUnsupported.
func (d *DataFile) UnmarshalJSON(b []byte) error {
	var j jsonDataFile
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("data file: %v: %w", err, ErrCorrupt)
	}
	out, err := j.dataFile()
	if err != nil {
		return err
	}
	*d = out
	return nil
}

func (d DataFile) toJSON() jsonDataFile {
	jd := jsonDataFile{
		Fields: nonNil(d.Fields), ColumnIndices: nonNil(d.ColumnIndices),
		FileMajorVersion: d.FileMajorVersion, FileMinorVersion: d.FileMinorVersion, Path: d.Path,
	}
	if d.FileSizeBytes != 0 {
		n := d.FileSizeBytes
		jd.FileSizeBytes = &n
	}
	return jd
}

func (j jsonDataFile) dataFile() (DataFile, error) {
	if j.BaseID != nil {
		return DataFile{}, fmt.Errorf("data file %s in base path %d: %w", j.Path, *j.BaseID, ErrUnsupported)
	}
	d := DataFile{
		Path: j.Path, Fields: j.Fields, ColumnIndices: j.ColumnIndices,
		FileMajorVersion: j.FileMajorVersion, FileMinorVersion: j.FileMinorVersion,
	}
	if j.FileSizeBytes != nil {
		d.FileSizeBytes = *j.FileSizeBytes
	}
	return d, nil
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// UnmarshalJSON reads pylance's FragmentMetadata.to_json. Fragments this
// package cannot commit (deletion files, stable row ids, data overlays, data
// files in another base path) are ErrUnsupported.
func (f *FragmentMetadata) UnmarshalJSON(b []byte) error {
	var j jsonFragment
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("fragment metadata: %v: %w", err, ErrCorrupt)
	}
	if present(j.DeletionFile) || present(j.RowIDMeta) || len(j.Overlays) > 0 {
		return fmt.Errorf("fragment %d with a deletion file, row ids or overlays: %w", j.ID, ErrUnsupported)
	}
	out := FragmentMetadata{ID: j.ID, PhysicalRows: j.PhysicalRows, Files: make([]DataFile, len(j.Files))}
	for i, d := range j.Files {
		df, err := d.dataFile()
		if err != nil {
			return fmt.Errorf("fragment %d: %w", j.ID, err)
		}
		out.Files[i] = df
	}
	*f = out
	return nil
}

func present(r json.RawMessage) bool {
	s := strings.TrimSpace(string(r))
	return s != "" && s != "null"
}

// WriteFragments writes batches as data files under uri/data/ and returns
// their fragments without committing anything: workers call it
// independently and one process commits every worker's fragments with
// CommitAppend (or CommitOverwrite) in one version. When a dataset exists at
// uri, batches must match its schema (ErrSchemaMismatch) and the files
// follow its storage version; otherwise (or with ForOverwrite) field ids are
// assigned from schema as Create assigns them. Files are cut as Writer.Write cuts them. On error,
// the files written so far are removed.
func WriteFragments(ctx context.Context, uri string, schema *arrow.Schema, batches []arrow.RecordBatch, opts ...Option) ([]FragmentMetadata, error) {
	w, err := fragmentWriter(ctx, uri, schema, opts)
	if err != nil {
		return nil, err
	}
	for _, rec := range batches {
		if err := ctx.Err(); err != nil {
			_ = w.Abort()
			return nil, err
		}
		if err := w.Write(rec); err != nil {
			_ = w.Abort()
			return nil, err
		}
	}
	return w.finishFragments()
}

// WriteFragmentsFrom is WriteFragments reading batches from r, whose schema
// is the schema written.
func WriteFragmentsFrom(ctx context.Context, uri string, r array.RecordReader, opts ...Option) ([]FragmentMetadata, error) {
	w, err := fragmentWriter(ctx, uri, r.Schema(), opts)
	if err != nil {
		return nil, err
	}
	for r.Next() {
		if err := ctx.Err(); err != nil {
			_ = w.Abort()
			return nil, err
		}
		if err := w.Write(r.RecordBatch()); err != nil {
			_ = w.Abort()
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		_ = w.Abort()
		return nil, err
	}
	return w.finishFragments()
}

// fragmentWriter is a Writer for WriteFragments: an Append's when the
// dataset exists, a Create's otherwise.
func fragmentWriter(ctx context.Context, uri string, schema *arrow.Schema, opts []Option) (*Writer, error) {
	if schema == nil {
		return nil, fmt.Errorf("write fragments to %s: nil schema: %w", uri, ErrInvalidOption)
	}
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	if _, err := Open(ctx, uri, opts...); errors.Is(err, ErrNotFound) || (err == nil && o.forOverwrite) {
		root, err := openLocation(uri, o)
		if err != nil {
			return nil, err
		}
		return newCreateWriter(root, schema, o)
	} else if err != nil {
		return nil, err
	}
	w, err := Append(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	if err := compatible(w.schema, schema); err != nil {
		return nil, fmt.Errorf("write fragments to %s: %w", uri, err)
	}
	return w, nil
}

// finishFragments closes the last data file and hands the fragments out;
// the writer is done.
func (w *Writer) finishFragments() ([]FragmentMetadata, error) {
	if w.cur != nil {
		if err := w.cutFile(); err != nil {
			_ = w.Abort()
			return nil, err
		}
	}
	if err := w.settle(); err != nil {
		_ = w.Abort()
		return nil, err
	}
	w.root.syncData()
	w.done = true
	out := make([]FragmentMetadata, len(w.frags))
	for i, f := range w.frags {
		out[i] = fragmentFromProto(f)
	}
	return out, nil
}

func fragmentFromProto(f *tablepb.DataFragment) FragmentMetadata {
	out := FragmentMetadata{ID: f.Id, PhysicalRows: f.PhysicalRows, Files: make([]DataFile, len(f.Files))}
	if df := f.DeletionFile; df != nil {
		out.DeletionFile = &DeletionFile{Bitmap: df.FileType == tablepb.DeletionFile_BITMAP, ReadVersion: df.ReadVersion, ID: df.Id, NumDeletedRows: df.NumDeletedRows}
	}
	for i, d := range f.Files {
		out.Files[i] = DataFile{
			Path: d.Path, Fields: slices.Clone(d.Fields), ColumnIndices: slices.Clone(d.ColumnIndices),
			FileMajorVersion: d.FileMajorVersion, FileMinorVersion: d.FileMinorVersion, FileSizeBytes: d.FileSizeBytes,
		}
	}
	return out
}

// CommitAppend commits fragments written by WriteFragments (in this or any
// other process, or by pylance) as one Append on the latest version of the
// dataset at uri; fragment ids are assigned from the dataset's
// max_fragment_id. Concurrent appends are rebased over as Writer.Commit
// does. Every fragment must hold one data file with the dataset's leaf
// fields (ErrSchemaMismatch) in its storage version (ErrVersionMismatch),
// present under data/.
func CommitAppend(ctx context.Context, uri string, frags []FragmentMetadata, opts ...Option) (*Dataset, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := Open(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	w, err := appendWriter(d, o)
	if err != nil {
		return nil, fmt.Errorf("commit append to %s: %w", uri, err)
	}
	if w.frags, err = w.checkFragments(frags); err != nil {
		return nil, fmt.Errorf("commit append to %s: %w", uri, err)
	}
	return w.Commit(ctx)
}

// CommitOverwrite commits fragments as a new version whose schema is schema
// and whose data is exactly frags, like pylance's LanceOperation.Overwrite:
// it creates the dataset when none is at uri, and otherwise replaces its data
// and schema (earlier versions stay readable; ErrConflict if another commit
// lands first). Field ids are assigned from schema as Create assigns them,
// which is how WriteFragments numbers the fields of a dataset that does not
// exist yet. The storage version is the fragments' (WithStorageVersion must
// agree), else the option's, else 2.2.
func CommitOverwrite(ctx context.Context, uri string, schema *arrow.Schema, frags []FragmentMetadata, opts ...Option) (*Dataset, error) {
	o, root, err := locate(uri, opts)
	if err != nil {
		return nil, err
	}
	if schema == nil {
		return nil, fmt.Errorf("commit overwrite of %s: nil schema: %w", uri, ErrInvalidOption)
	}
	storage := o.storageVersion
	for _, f := range frags {
		for _, df := range f.Files {
			v := fmt.Sprintf("%d.%d", df.FileMajorVersion, df.FileMinorVersion)
			if storage == "" {
				storage = v
			} else if v != storage {
				return nil, fmt.Errorf("commit overwrite of %s: data file %s is %s, want %s: %w", uri, df.Path, v, storage, ErrVersionMismatch)
			}
		}
	}
	if storage == "" {
		storage = StorageVersion2_2
	}
	o.storageVersion = storage
	w, err := newCreateWriter(root, schema, o)
	if err != nil {
		return nil, fmt.Errorf("commit overwrite of %s: %w", uri, err)
	}
	d, err := Open(ctx, uri, opts...)
	switch {
	case err == nil && d.mf.m.MaxAllocatedFieldId != nil:
		// Fragments written for an overwrite number their fields from 0,
		// which a table with non-reusable field ids forbids.
		return nil, fmt.Errorf("commit overwrite of %s: the table keeps non-reusable field ids (feature flag 1<<15): %w", uri, ErrUnsupported)
	case err == nil:
		w.base, w.replace = d.mf, true
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if w.frags, err = w.checkFragments(frags); err != nil {
		return nil, fmt.Errorf("commit overwrite of %s: %w", uri, err)
	}
	return w.Commit(ctx)
}

// newCreateWriter is a Writer for a new schema: field ids assigned as Lance
// assigns them, the storage version o's (2.2 when unset). No dataset check.
func newCreateWriter(root *location, schema *arrow.Schema, o options) (*Writer, error) {
	if o.storageVersion == "" {
		o.storageVersion = StorageVersion2_2
	}
	ls, cols, err := format.SchemaToLance(schema)
	if err != nil {
		return nil, err
	}
	w := &Writer{root: root, schema: schema, fields: ls.Fields, metadata: ls.Metadata, opts: o}
	for _, c := range cols {
		w.leafIDs = append(w.leafIDs, c.ID)
	}
	if err := w.setStorage(o.storageVersion); err != nil {
		return nil, err
	}
	return w, nil
}

// checkFragments validates fragments against the writer's schema and
// storage version and converts them to manifest fragments (ids unset).
func (w *Writer) checkFragments(frags []FragmentMetadata) ([]*tablepb.DataFragment, error) {
	if len(frags) == 0 {
		return nil, fmt.Errorf("no fragments: %w", ErrInvalidOption)
	}
	out := make([]*tablepb.DataFragment, 0, len(frags))
	seen := make(map[string]bool, len(frags))
	for i, f := range frags {
		if f.DeletionFile != nil {
			return nil, fmt.Errorf("fragment %d has a deletion file: new fragments have none: %w", i, ErrUnsupported)
		}
		if len(f.Files) != 1 {
			return nil, fmt.Errorf("fragment %d has %d data files: %w", i, len(f.Files), ErrUnsupported)
		}
		df := f.Files[0]
		if df.Path == "" || strings.Contains(df.Path, "..") || strings.ContainsAny(df.Path, "\\") || filepath.IsAbs(df.Path) {
			return nil, fmt.Errorf("fragment %d: data file path %q: %w", i, df.Path, ErrInvalidOption)
		}
		if seen[df.Path] {
			return nil, fmt.Errorf("fragment %d: data file %s given twice: %w", i, df.Path, ErrInvalidOption)
		}
		seen[df.Path] = true
		if !slices.Equal(df.Fields, w.leafIDs) {
			return nil, fmt.Errorf("fragment %d: data file %s holds fields %v, the schema's leaves are %v: %w", i, df.Path, df.Fields, w.leafIDs, ErrSchemaMismatch)
		}
		if len(df.ColumnIndices) != len(df.Fields) {
			return nil, fmt.Errorf("fragment %d: %d column indices for %d fields: %w", i, len(df.ColumnIndices), len(df.Fields), ErrSchemaMismatch)
		}
		for j, c := range df.ColumnIndices {
			if c != int32(j) {
				return nil, fmt.Errorf("fragment %d: field %d at column %d: %w", i, df.Fields[j], c, ErrUnsupported)
			}
		}
		if df.FileMajorVersion != w.version[0] || df.FileMinorVersion != w.version[1] {
			return nil, fmt.Errorf("fragment %d: data file %s is %d.%d, dataset %s: %w", i, df.Path, df.FileMajorVersion, df.FileMinorVersion, w.storage, ErrVersionMismatch)
		}
		if err := checkDataFile(w.root, df.Path, df.FileSizeBytes, f.PhysicalRows); err != nil {
			return nil, fmt.Errorf("fragment %d: data file %s: %w", i, df.Path, err)
		}
		out = append(out, &tablepb.DataFragment{
			Files: []*tablepb.DataFile{{
				Path: df.Path, Fields: slices.Clone(df.Fields), ColumnIndices: slices.Clone(df.ColumnIndices),
				FileMajorVersion: df.FileMajorVersion, FileMinorVersion: df.FileMinorVersion, FileSizeBytes: df.FileSizeBytes,
			}},
			PhysicalRows: f.PhysicalRows,
		})
	}
	return out, nil
}

// checkDataFile opens a data file's footer and checks its size (when known)
// and row count against the fragment's metadata, so that a fragment that does
// not match its file is refused before it is committed.
func checkDataFile(root *location, name string, size, rows uint64) error {
	ctx := context.Background()
	n, err := root.st.Size(ctx, dataKey(name))
	if err != nil {
		return err
	}
	if size != 0 && uint64(n) != size {
		return fmt.Errorf("%d bytes, metadata says %d: %w", n, size, ErrCorrupt)
	}
	f, err := root.openDataFile(ctx, name)
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	nr := f.NumRows()
	f.Close()
	if nr < 0 || uint64(nr) != rows {
		return fmt.Errorf("%d rows, metadata says %d: %w", nr, rows, ErrCorrupt)
	}
	return nil
}
