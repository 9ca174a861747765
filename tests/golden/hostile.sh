#!/usr/bin/env bash
# Hostile input: `mlenvc check`, `build` and `fmt` on INPUT end with diagnostics or output
# (exit 0 or 1), never a crash, and print a bounded amount (each once crashed, hung or printed
# a gigabyte: tests/fuzz/seeds/). ctest's TIMEOUT bounds the time, and ulimit -v the memory:
# an unbounded allocation fails, and mlenvc exits through std::bad_alloc (exit > 1).
set -u
ulimit -v 262144
mlenvc=$1 input=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for command in "check" "build -o $out/tree" "fmt"; do
  # shellcheck disable=SC2086
  "$mlenvc" $command "$input" >"$out/stdout" 2>"$out/stderr"
  code=$?
  bytes=$(($(wc -c <"$out/stdout") + $(wc -c <"$out/stderr")))
  if [ "$code" -gt 1 ]; then
    echo "mlenvc $command $input: exit $code"; tail -c 2000 "$out/stderr"; status=1
  fi
  if [ "$bytes" -gt 1048576 ]; then
    echo "mlenvc $command $input: printed $bytes bytes"; status=1
  fi
done
exit $status
