#!/usr/bin/env bash
# Golden test: runs `mlenvc ARGS...` in DIR and compares its stderr, stdout and exit status
# with EXPECTED byte for byte. MLENV_UPDATE_GOLDENS=1 rewrites EXPECTED instead; review the
# result with `git diff`.
set -u
mlenvc=$1 dir=$2 expected=$3
shift 3
cd "$dir" || exit 2
actual=$(mktemp)
trap 'rm -f "$actual" "$actual.out"' EXIT
NO_COLOR=1 "$mlenvc" "$@" 2>"$actual" >"$actual.out"
status=$?
{ cat "$actual.out"; cat "$actual"; echo "exit: $status"; } >"$actual.all"
mv "$actual.all" "$actual"
if [ "${MLENV_UPDATE_GOLDENS:-}" = 1 ]; then
  cp "$actual" "$expected"
  echo "updated $expected"
  exit 0
fi
if ! diff -u "$expected" "$actual"; then
  echo "golden mismatch: $expected (MLENV_UPDATE_GOLDENS=1 ctest -R golden to update, then review git diff)"
  exit 1
fi
