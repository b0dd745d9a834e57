// Package pyenv finds the python interpreter with pylance that the
// project's commands and examples compare planar with.
package pyenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNoPylance means no python with pylance was found.
var ErrNoPylance = errors.New("pylance not available")

// Find returns the python to use and pylance's version: flagPy, else
// $PLANAR_PYTHON, else interop/.venv/bin/python in the working directory or
// above it. The interpreter must import lance and pyarrow.
func Find(flagPy string) (string, string, error) {
	py := flagPy
	if py == "" {
		py = os.Getenv("PLANAR_PYTHON")
	}
	if py == "" {
		dir, _ := os.Getwd()
		for {
			cand := filepath.Join(dir, "interop", ".venv", "bin", "python")
			if _, err := os.Stat(cand); err == nil {
				py = cand
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if py == "" {
		return "", "", fmt.Errorf("%w: no interop/.venv/bin/python here or above (run `sh interop/setup.sh`)", ErrNoPylance)
	}
	out, err := exec.Command(py, "-c", "import lance, pyarrow; print(lance.__version__)").CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("%w at %s: %v: %s (run `sh interop/setup.sh`)", ErrNoPylance, py, err, strings.TrimSpace(string(out)))
	}
	return py, strings.TrimSpace(string(out)), nil
}
