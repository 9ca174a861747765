#!/bin/sh
# MLENV_PATH: a site library searched for imports with no `./`, `../` or `std/` that are not
# found beside the importing file; folders in order; a file beside the importer and the
# embedded stdlib are never shadowed; a folder other users can write to is warned about.
# usage: site_path_test.sh MLENVC
set -eu
mlenvc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NO_COLOR=1
mkdir -p "$tmp/empty" "$tmp/first/site" "$tmp/second/site" "$tmp/second/std/profiles" "$tmp/work"
site() {  # site FILE CLUSTER: a site profile declaring CLUSTER
  printf 'import "std/profiles/h100"\n\ncluster %s extends h100.node4 {\n  api = "%s.example"\n}\n' \
    "$2" "$(printf '%s' "$2" | tr _ -)" > "$1"
}
site "$tmp/first/site/barcelona.mlenv" from_first
site "$tmp/second/site/barcelona.mlenv" from_second
site "$tmp/second/site/cairo.mlenv" cairo
# A broken std/ in the site library: were it read, check would fail.
echo 'this is not a profile' > "$tmp/second/std/profiles/h100.mlenv"
cd "$tmp/work"
cat > team.mlenv <<'MLENV'
import "site/barcelona"
import "site/cairo"

cluster a extends barcelona.from_first {
  namespace = "a"
}

cluster b extends cairo.cairo {
  namespace = "b"
}
MLENV

# Without MLENV_PATH a bare import is relative to the file, as always.
if "$mlenvc" check team.mlenv 2> unset.err; then fail "resolved without MLENV_PATH"; fi
grep -q 'error\[E0201\]: cannot read `site/barcelona.mlenv`' unset.err || fail "no E0201 without MLENV_PATH"

# Folders in order (an empty entry is skipped): barcelona from the first, cairo from the second.
MLENV_PATH="$tmp/empty::$tmp/first:$tmp/second" "$mlenvc" check team.mlenv ||
  fail "site library imports"

# Found nowhere: the error says the site library was searched too.
printf 'import "site/nowhere"\n' > nowhere.mlenv
if MLENV_PATH="$tmp/first" "$mlenvc" check nowhere.mlenv 2> nowhere.err; then fail "site/nowhere"; fi
grep -q 'nor found in the folders of MLENV_PATH' nowhere.err || fail "E0201 does not name MLENV_PATH"

# A file beside the importer wins over the site library.
mkdir site
site site/barcelona.mlenv local
if MLENV_PATH="$tmp/first:$tmp/second" "$mlenvc" check team.mlenv 2> local.err; then
  fail "the site library shadowed a relative import"
fi
grep -q 'error\[E0205\]' local.err || fail "not the local file's declarations"
sed -i 's/barcelona.from_first/barcelona.local/' team.mlenv
MLENV_PATH="$tmp/first:$tmp/second" "$mlenvc" check team.mlenv || fail "the local file"

# `./` is relative only: never searched in the site library.
printf 'import "./site/cairo"\n' > dotted.mlenv
if MLENV_PATH="$tmp/second" "$mlenvc" check dotted.mlenv 2> dotted.err; then
  fail "./ was searched in the site library"
fi
grep -q 'error\[E0201\]' dotted.err || fail "no E0201 for ./"
# A folder other users can write to is used with a warning, as ssh judges one (issue 32).
MLENV_PATH="$tmp/first" "$mlenvc" check team.mlenv 2> private.err || true
! grep -q 'warning' private.err || { cat private.err; fail "a warning for a private folder"; }
chmod 0777 "$tmp/first"
MLENV_PATH="$tmp/first" "$mlenvc" check team.mlenv 2> shared.err || true
grep -q "warning: MLENV_PATH folder \`$tmp/first\`.*can be changed by other users" shared.err ||
  { cat shared.err; fail "no warning for a world-writable MLENV_PATH folder"; }
chmod 0755 "$tmp/first"
echo "site path: ok"
