// Package interop checks planar against the real Lance implementation
// (pylance, the Rust library behind Python) in both directions: files planar
// writes must read back in pylance equal to the Arrow data planar was given,
// and files pylance writes must read back in planar equal to what pylance was
// given. The Python side lives in check.py; setup.sh installs the pinned
// pylance into interop/.venv.
//
// s3_test.go runs pylance against a local S3-compatible server
// (internal/s3test) through storage_options: create, read, append and
// concurrent appends committed with conditional puts.
//
// With CI=true a missing pylance fails the tests; otherwise they skip loudly.
package interop
