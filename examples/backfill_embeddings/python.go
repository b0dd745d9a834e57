package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The example compares with pylance when it finds it. (It imports nothing
// of planar's internals, so it can be copied out of the repository.)

var errNoPylance = errors.New("pylance not available")

// findPython returns the python to use and pylance's version: flagPy, else
// $PLANAR_PYTHON, else interop/.venv/bin/python in the working directory or
// above it (what `sh interop/setup.sh` makes in a clone of planar). The
// interpreter must import lance and pyarrow.
func findPython(flagPy string) (string, string, error) {
	py := flagPy
	if py == "" {
		py = os.Getenv("PLANAR_PYTHON")
	}
	for dir, _ := os.Getwd(); py == "" && dir != ""; {
		if cand := filepath.Join(dir, "interop", ".venv", "bin", "python"); fileExists(cand) {
			py = cand
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
		} else {
			dir = ""
		}
	}
	if py == "" {
		return "", "", fmt.Errorf("%w: no interop/.venv/bin/python here or above (run `sh interop/setup.sh`, or give -python)", errNoPylance)
	}
	out, err := exec.Command(py, "-c", "import lance, pyarrow; print(lance.__version__)").CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("%w at %s: %v: %s", errNoPylance, py, err, strings.TrimSpace(string(out)))
	}
	return py, strings.TrimSpace(string(out)), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
