#!/usr/bin/env bash
# Property: `mlenvc fmt` is idempotent on everything it accepts. For each FILE that formats
# (exit 0), formatting the output again must give the output unchanged.
set -u
mlenvc=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0 checked=0
for file in "$@"; do
  "$mlenvc" fmt "$file" >"$tmp/once.mlenv" 2>/dev/null || continue
  if ! "$mlenvc" fmt "$tmp/once.mlenv" >"$tmp/twice.mlenv" 2>"$tmp/err"; then
    echo "fmt accepted $file but not its own output:"; cat "$tmp/err"; status=1; continue
  fi
  if ! diff -u "$tmp/once.mlenv" "$tmp/twice.mlenv" >"$tmp/diff"; then
    echo "fmt is not idempotent on $file:"; cat "$tmp/diff"; status=1
  fi
  checked=$((checked + 1))
done
echo "fmt idempotent on $checked files"
[ "$checked" -gt 0 ] || status=1
exit $status
