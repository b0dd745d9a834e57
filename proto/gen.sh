#!/bin/sh
# Regenerates the Go code for every .proto file in this directory.
set -eu
cd "$(dirname "$0")"
plugin="$(go tool -n protoc-gen-go)"
inc=""
for d in /usr/include /usr/local/include; do
  if [ -f "$d/google/protobuf/empty.proto" ]; then inc="-I$d"; fi
done
protoc --plugin=protoc-gen-go="$plugin" -I. $inc \
  --go_out=. --go_opt=module=github.com/planarlance/planar/proto \
  file.proto file2.proto table.proto transaction.proto encodings_v2_0.proto encodings_v2_1.proto encodings_v2_3.proto
