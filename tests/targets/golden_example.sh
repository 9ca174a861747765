#!/bin/sh
# Golden test of one real example: `mlenvc build EXAMPLE -o TMP` must equal GOLDEN_DIR byte for
# byte (except `_runtime/`, tested against runtime/ itself). With MLENV_UPDATE_GOLDENS=1 the
# golden tree is rewritten instead; review the result with `git diff`.
# Usage: golden_example.sh MLENVC EXAMPLE GOLDEN_DIR
set -eu
mlenvc=$1 example=$2 golden=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$mlenvc" build "$example" -o "$tmp/out" > "$tmp/stdout" 2> "$tmp/stderr" || {
  cat "$tmp/stderr" >&2
  exit 1
}
rm -rf "$tmp/out/_runtime"
if [ "${MLENV_UPDATE_GOLDENS:-}" = 1 ]; then
  rm -rf "$golden"
  mkdir -p "$(dirname "$golden")"
  cp -R "$tmp/out" "$golden"
  echo "updated $golden"
  exit 0
fi
diff -ru "$golden" "$tmp/out"
if command -v kubectl > /dev/null 2>&1; then
  find "$tmp/out" -name kustomization.yaml | while read -r k; do
    kubectl kustomize "$(dirname "$k")" > /dev/null
  done
fi
