#!/usr/bin/env bash
# Fails when a diagnostic code of the registry appears in no expected-output file under
# tests/: every code must be exercised by a golden test (Carbon's rule).
set -u
mlenvc=$1 tests=$2
missing=0
internal=$(dirname "$0")/internal_codes.txt
while read -r code _; do
  if test_file=$(awk -v c="$code" '$1 == c { print $2 }' "$internal") && [ -n "$test_file" ]; then
    if ! grep -q "Code::$code" "$tests/../$test_file"; then
      echo "$code is listed as internal, but $test_file does not exercise it"
      missing=1
    fi
    continue
  fi
  if ! grep -rqF --include='*.stderr' --include='*.expected' --include='*.txt' "[$code]" "$tests"; then
    echo "no golden test exercises $code"
    missing=1
  fi
done < <("$mlenvc" explain --list)
[ $missing = 0 ] && echo "every diagnostic code has a golden test"
exit $missing
