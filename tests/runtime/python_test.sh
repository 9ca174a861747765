# Sourced by the tests that run Debian's Python packages for real (torchrun.sh, debugpy.sh):
# `python` (Debian's), `require MODULE PACKAGE`, which reports the test skipped (77) where the
# package is absent (`./mlenv test` installs it), a temporary `$dir` removed at exit, and
# free_port.
python=/usr/bin/python3
require() {
  "$python" -c "import $1" 2>/dev/null && return
  echo "$2 is not installed (./mlenv deps $2): skipped"
  exit 77
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../slurm/free_port.sh"
