// Package proto holds the protobuf sources of the Lance file format (the
// container, the schema, the 2.1 encodings and the 2.3 planar page layout)
// and, in its sub-packages, the generated Go code, which is committed.
//
// Regenerate with `go generate ./proto/...` (needs protoc from Debian's
// protobuf-compiler; protoc-gen-go is pinned as a tool in go.mod).
package proto

//go:generate sh gen.sh
