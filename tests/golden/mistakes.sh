#!/usr/bin/env bash
# Realistic mistakes (tests/golden/mistakes/NN_*.mlenv), each saying on its first line what
# `mlenvc check` must do with it: `// expect: CODE` (the code is reported, and check fails for
# an error), `// expect: CODE at LINE` (reported at that line of the file: the user's own) or
# `// allow: why` (the program is valid: check passes without an error or a warning). The
# README of that folder says why they are here.
set -u
mlenvc=$1 dir=$2
failed=0 count=0
cd "$dir" || exit 2
for file in [0-9]*.mlenv; do
  count=$((count + 1))
  first=$(head -n 1 "$file")
  first=${first#$'\xEF\xBB\xBF'}  # a byte order mark, as Windows editors write it
  output=$(NO_COLOR=1 "$mlenvc" check "$file" 2>&1)
  status=$?
  if [ $status -gt 1 ]; then
    echo "$file: mlenvc exited with $status"
    echo "$output"
    failed=1
  elif [[ $first == "// expect: "* ]]; then
    code=${first#// expect: } line='[0-9]+'
    if [[ $code == *" at "* ]]; then line=${code#* at } code=${code%% at *}; fi
    want=$([[ $code == W* ]] && echo 0 || echo 1)
    if ! grep -qE "^$file:$line:[0-9]+: (error|warning)\[$code\]" <<<"$output" ||
      [ $status != "$want" ]; then
      echo "$file: expected $code at line $line (exit $want), got exit $status:"
      echo "$output"
      failed=1
    fi
  elif [[ $first == "// allow: "* ]]; then
    if [ $status != 0 ] || grep -qE '^[^ ]*(error|warning)\[' <<<"$output"; then
      echo "$file: expected a clean check, got exit $status:"
      echo "$output"
      failed=1
    fi
  else
    echo "$file: the first line says neither \`// expect: CODE\` nor \`// allow: why\`"
    failed=1
  fi
done
[ $failed = 0 ] && echo "all $count mistakes caught or allowed as their first lines say"
exit $failed
