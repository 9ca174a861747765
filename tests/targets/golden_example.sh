#!/bin/sh
# Golden test of one real example: `mlenvc build EXAMPLE -o TMP` must equal GOLDEN_DIR byte for
# byte (except `_runtime/`, tested against runtime/ itself). With MLENV_UPDATE_GOLDENS=1 the
# golden tree is rewritten instead; review the result with `git diff`. `build -o -`, which
# writes each object as it is rendered, must equal the stream written after the whole output
# was rendered and validated (`--openapi`, with a document that knows none of the kinds).
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
"$mlenvc" build "$example" -o - > "$tmp/streamed" 2> "$tmp/stream.err" || {
  cat "$tmp/stream.err" >&2
  exit 1
}
echo '{"swagger": "2.0", "definitions": {}}' > "$tmp/none.json"
"$mlenvc" build "$example" -o - --openapi "$tmp/none.json" > "$tmp/buffered" 2> "$tmp/stderr"
cmp "$tmp/buffered" "$tmp/streamed"
grep -v '^mlenvc build: note: ' "$tmp/stderr" | diff - "$tmp/stream.err"
grep -q '^kind: ' "$tmp/streamed" || [ ! -s "$tmp/buffered" ]
if command -v kubectl > /dev/null 2>&1; then
  find "$tmp/out" -name kustomization.yaml | while read -r k; do
    kubectl kustomize "$(dirname "$k")" > /dev/null
  done
fi
