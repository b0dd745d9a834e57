#!/bin/sh
# Installs the SeaweedFS `weed` binary that internal/s3test starts as a local
# S3-compatible server for the object-storage tests. Idempotent and cached: the
# binary goes to $PLANAR_CACHE (default: the user cache dir, planar/) under the
# pinned version from internal/s3test/seaweedfs.version, and an existing one is
# kept. Prints the binary's path on its last line.
#
# SeaweedFS's go.mod has replace directives, so `go install module@version`
# refuses it; the module is fetched from the Go module proxy with
# `go mod download` and built as the main module from the module cache.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
version="$(tr -d ' \n' < "$here/../internal/s3test/seaweedfs.version")"
module=github.com/seaweedfs/seaweedfs
cache="${PLANAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/planar}"
dir="$cache/seaweedfs-$version"
bin="$dir/weed"
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then
  echo "s3server: $bin already built" >&2
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
start=$(date +%s)
src="$(cd "$dir" && GOFLAGS= go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$src" ] || [ ! -d "$src" ]; then
  echo "s3server: go mod download $module@$version gave no source dir" >&2
  exit 1
fi
(cd "$src" && GOFLAGS= go build -trimpath -o "$bin.tmp" ./weed)
mv "$bin.tmp" "$bin"
echo "s3server: built $bin in $(( $(date +%s) - start ))s" >&2
echo "$bin"
