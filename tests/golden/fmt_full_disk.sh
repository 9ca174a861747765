#!/usr/bin/env bash
# `fmt -w` when the file cannot be written whole (issue #21 item 11): a full disk once cut the
# user's source to 4,096 bytes and exited 0. A file-size limit stands in for the full disk
# (`ulimit -f`, with SIGXFSZ ignored, makes write(2) fail with EFBIG past it, as ENOSPC does):
# fmt exits non-zero, says why, and the source keeps every byte.
# usage: fmt_full_disk.sh MLENVC
set -u
mlenvc=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# 400 unformatted images (about 24 KiB; formatted, longer): the write crosses the 8 KiB limit.
for i in $(seq 1 400); do printf 'image i%d {from="base:1" tag="t%d"}\n' "$i" "$i"; done >"$dir/src.mlenv"
cp "$dir/src.mlenv" "$dir/before.mlenv"
"$mlenvc" fmt "$dir/src.mlenv" >"$dir/formatted" || fail "the input does not format"
cmp -s "$dir/src.mlenv" "$dir/formatted" && fail "the input is already formatted"
[ "$(wc -c <"$dir/formatted")" -gt 8192 ] || fail "the formatted text fits the limit"
(
  trap '' XFSZ
  ulimit -f 8
  "$mlenvc" fmt -w "$dir/src.mlenv" 2>"$dir/err"
)
status=$?
[ "$status" -ne 0 ] || fail "fmt -w exited 0 on a write that failed"
grep -q 'cannot rewrite' "$dir/err" || { cat "$dir/err"; fail "fmt -w does not say why"; }
cmp -s "$dir/src.mlenv" "$dir/before.mlenv" || fail "the source changed"
[ -z "$(find "$dir" -name '*.mlenv-tmp-*')" ] || fail "a temporary file was left behind"
# Without the limit the same command rewrites it.
"$mlenvc" fmt -w "$dir/src.mlenv" || fail "fmt -w without the limit"
cmp -s "$dir/src.mlenv" "$dir/formatted" || fail "fmt -w wrote other bytes than fmt prints"
echo "fmt full disk: ok"
