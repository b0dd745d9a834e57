package dataset

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/planarlance/planar/internal/atomicfile"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/proto/txnpb"
)

// DefaultMaxCommitRetries is how many times a commit rebases over versions
// committed concurrently before giving up with ErrConflict.
const DefaultMaxCommitRetries = 20

// writerLibrary and writerLibraryVersion are recorded in every manifest.
const (
	writerLibrary        = "planar"
	writerLibraryVersion = "0.1.0"
)

// Feature flags (Manifest.reader_feature_flags / writer_feature_flags) this
// package keeps intact when it commits over a version: deletion files (bit
// 0), stable row ids (bit 1: new fragments get row ids and version
// sequences as Lance's commit gives them, rowids.go), table config (bit 3)
// and non-reusable field ids (bit 15: every commit advances
// max_allocated_field_id, and new fields are numbered after it). Any other
// flag (multiple base paths, overlays, row lineage spilled to data files,
// ...) would need work on commit that is not done here.
const knownFeatureFlags = 1<<0 | 1<<1 | flagTableConfig | flagMixedVersions | 1<<15

// flagTableConfig marks a manifest with a table config.
const flagTableConfig = 1 << 3

// flagMixedVersions marks a table whose data files may be of storage
// versions other than the manifest's default (both words).
const flagMixedVersions = 1 << 8

// checkFeatureFlags refuses a manifest that uses features planar does not
// know (ErrUnsupported).
func checkFeatureFlags(m *tablepb.Manifest) error {
	if f := m.ReaderFeatureFlags | m.WriterFeatureFlags; f&^knownFeatureFlags != 0 {
		return fmt.Errorf("feature flags %#x: %w", f, ErrUnsupported)
	}
	return nil
}

// commitSpec describes one commit: its transaction and how the new manifest
// follows from the one it is based on.
type commitSpec struct {
	root *location
	txn  *txnpb.Transaction
	// build returns the new version's manifest given the manifest it
	// follows (nil when creating). It must not modify prev.
	build      func(prev *tablepb.Manifest) (*tablepb.Manifest, error)
	maxRetries int
	// keepIndex carries prev's index section over (appends); an overwrite
	// drops it, its indices being of data that is gone.
	keepIndex bool
	// txnMayExist: the transaction file may have been written by an
	// earlier try of the same transaction (its uuid is the caller's), and
	// is written over.
	txnMayExist bool
}

// commit writes the transaction file, then the next version's manifest with
// put-if-not-exists. prev is the manifest at txn.read_version (nil when
// creating the dataset). An Append whose version was taken by another Append
// is rebased and retried; any other lost race is ErrConflict.
func commit(ctx context.Context, s commitSpec, prev *manifestFile) (*manifestFile, error) {
	txnName := transactionFileName(s.txn.ReadVersion, s.txn.Uuid)
	tb, err := proto.Marshal(s.txn)
	if err != nil {
		return nil, fmt.Errorf("encode transaction: %w", err)
	}
	put := s.root.st.PutIfNotExists
	if s.txnMayExist {
		put = s.root.st.Put
	}
	if err := put(ctx, transactionsDir+"/"+txnName, tb); err != nil {
		return nil, fmt.Errorf("dataset %s: transaction file: %w", s.root, err)
	}
	_, isAppend := s.txn.Operation.(*txnpb.Transaction_Append_)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var pm *tablepb.Manifest
		var index []byte
		next := uint64(1)
		if prev != nil {
			pm = prev.m
			if s.keepIndex {
				index = prev.indexSection
			}
			next = pm.Version + 1
			if err := checkFeatureFlags(pm); err != nil {
				return nil, fmt.Errorf("dataset %s version %d: %w", s.root, pm.Version, err)
			}
		}
		m, err := s.build(pm)
		if err != nil {
			return nil, err
		}
		m.Version = next
		if m.MaxAllocatedFieldId != nil {
			// Lance's update_max_field_id: the high-water mark covers
			// every id the new version references.
			top := maxFieldID(m)
			m.MaxAllocatedFieldId = &top
		}
		m.TransactionFile = txnName
		m.Timestamp = timestamppb.New(time.Now())
		m.WriterVersion = &tablepb.Manifest_WriterVersion{Library: writerLibrary, Version: writerLibraryVersion}
		b, err := encodeManifestFile(m, s.txn, index)
		if err != nil {
			return nil, err
		}
		err = s.root.st.PutIfNotExists(ctx, versionsDir+"/"+nextManifestName(prev, next), b)
		if err == nil {
			writeHint(ctx, s.root, next)
			return &manifestFile{m: m, indexSection: index, v1Names: prev != nil && prev.v1Names}, nil
		}
		if !errors.Is(err, ErrObjectExists) {
			return nil, fmt.Errorf("dataset %s: commit version %d: %w", s.root, next, err)
		}
		// Another writer committed version next first.
		if !isAppend || prev == nil {
			return nil, fmt.Errorf("dataset %s: version %d was committed concurrently: %w", s.root, next, ErrConflict)
		}
		if attempt >= s.maxRetries {
			return nil, fmt.Errorf("dataset %s: version %d taken after %d retries: %w", s.root, next, attempt, ErrConflict)
		}
		winner, err := readManifestVersion(ctx, s.root, next)
		if err != nil {
			return nil, fmt.Errorf("rebase over version %d: %w", next, err)
		}
		if err := appendCompatible(ctx, s.root, winner.m); err != nil {
			return nil, err
		}
		prev = winner
	}
}

// appendCompatible reports whether an Append can be rebased over the version
// m, by Lance's conflict rules (lance 14.0.2 io/commit/conflict_resolver.rs
// check_append_txn): over anything but an Overwrite, a Restore, an
// UpdateMemWalState or an operation this package cannot name. The appended
// fragments keep the columns they were written with: a column the other
// commit added reads as nulls on them, as in Lance.
func appendCompatible(ctx context.Context, root *location, m *tablepb.Manifest) error {
	if m.TransactionFile == "" {
		return fmt.Errorf("dataset %s: version %d has no transaction file: %w", root, m.Version, ErrConflict)
	}
	t, err := readTransaction(ctx, root, m.TransactionFile)
	if err != nil {
		return fmt.Errorf("dataset %s version %d: %w", root, m.Version, err)
	}
	switch op := operationNumber(t); op {
	case opOverwrite, opRestore, opUpdateMemWalState, 0:
		return fmt.Errorf("dataset %s: version %d (transaction operation %d) cannot be appended over: %w", root, m.Version, op, ErrConflict)
	}
	return nil
}

// Field numbers of Transaction's operation oneof (lance-table
// protos/transaction.proto); planar models only Append, Overwrite and Merge,
// the others stay unknown fields.
const (
	opAppend            = 100
	opOverwrite         = 102
	opMerge             = 105
	opRestore           = 106
	opUpdateMemWalState = 112
)

// operationNumber is the field number of t's operation, 0 when it has none
// that Lance 14.0.2 defines (100 to 115).
func operationNumber(t *txnpb.Transaction) int {
	switch t.Operation.(type) {
	case *txnpb.Transaction_Append_:
		return opAppend
	case *txnpb.Transaction_Overwrite_:
		return opOverwrite
	case *txnpb.Transaction_Merge_:
		return opMerge
	}
	b := t.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0
		}
		b = b[n:]
		if num >= 100 && num <= 115 {
			return int(num)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0
		}
		b = b[n:]
	}
	return 0
}

// syncDir makes a directory's new entries durable; best effort.
func syncDir(dir string) { _ = atomicfile.SyncDir(dir) }

// writeHint records the latest version in _versions/latest_version_hint.json,
// best effort: readers list _versions when it is stale or missing.
func writeHint(ctx context.Context, root *location, version uint64) {
	b := []byte(`{"version":` + strconv.FormatUint(version, 10) + `}`)
	_ = root.st.Put(ctx, versionsDir+"/"+hintFile, b)
}

// nextFragmentID is the id the next new fragment of m gets.
func nextFragmentID(m *tablepb.Manifest) uint64 {
	if m == nil {
		return 0
	}
	next := uint64(0)
	if m.MaxFragmentId != nil {
		next = uint64(*m.MaxFragmentId) + 1
	}
	for _, f := range m.Fragments {
		if f.Id >= next {
			next = f.Id + 1
		}
	}
	return next
}

// withFragmentIDs clones frags and numbers the clones from first.
func withFragmentIDs(frags []*tablepb.DataFragment, first uint64) []*tablepb.DataFragment {
	out := make([]*tablepb.DataFragment, len(frags))
	for i, f := range frags {
		c := proto.Clone(f).(*tablepb.DataFragment)
		c.Id = first + uint64(i)
		out[i] = c
	}
	return out
}
