#!/bin/sh
# Creates the interop venvs with their pinned packages:
#   interop/.venv    pylance 14.0.2, LanceDB 0.40.0, pyarrow  (requirements.txt)
#   interop/.venv13  pylance 13.0.0, pyarrow: the Lance LanceDB 0.40 embeds,
#                    the second reader of every 2.2 file     (requirements13.txt)
# (pylance 13 and 14 cannot share a venv.) Idempotent: a venv that already
# has its pinned versions is kept.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-python3}"

# pinned VENV REQUIREMENTS: exits 0 when VENV has every pinned version.
pinned() {
  [ -x "$1/bin/python" ] && "$1/bin/python" - "$2" <<'PYEOF'
import sys, importlib.metadata as md
want = {}
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, ver = line.split("==")
        want[name] = ver
def have(name):
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None
sys.exit(0 if all(have(n) == v for n, v in want.items()) else 1)
PYEOF
}

# mkvenv VENV REQUIREMENTS IMPORTS: creates VENV unless it is pinned already.
mkvenv() {
  if pinned "$1" "$2"; then
    echo "interop: $1 already has the pinned packages"
    return 0
  fi
  "$py" -m venv "$1"
  "$1/bin/python" -m pip install --quiet --disable-pip-version-check -r "$2"
  "$1/bin/python" -c "import $3, lance; print('interop: $1: pylance', lance.__version__)"
}

mkvenv "$here/.venv" "$here/requirements.txt" "lance, lancedb, pyarrow"
mkvenv "$here/.venv13" "$here/requirements13.txt" "lance, pyarrow"
