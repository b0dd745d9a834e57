#!/bin/sh
# Creates interop/.venv with the pinned pylance, pyarrow and lancedb. Idempotent: an
# existing venv that already has the pinned versions is kept.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
py="${PYTHON:-python3}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" - "$here/requirements.txt" <<'PYEOF'
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
then
  echo "interop: $venv already has the pinned packages"
  exit 0
fi
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" -c "import lance, lancedb, pyarrow; print('interop: pylance', lance.__version__, 'lancedb', lancedb.__version__, 'pyarrow', pyarrow.__version__)"
