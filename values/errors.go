package values

import "errors"

// ErrCorrupt is wrapped by every decoder error caused by malformed or
// inconsistent input bytes.
var ErrCorrupt = errors.New("planar/values: corrupt data")

// ErrUnsupported is wrapped when an encoding is well formed but not
// implemented (or not allowed in the context it appears in).
var ErrUnsupported = errors.New("planar/values: unsupported encoding")

// ErrNotApplicable is returned by an encoder handed data it cannot encode
// (for example a value wider than the declared bit width).
var ErrNotApplicable = errors.New("planar/values: codec does not apply")
