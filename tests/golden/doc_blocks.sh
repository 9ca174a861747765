#!/usr/bin/env bash
# Every code block of README.md, schema/LANGUAGE.md and schema/LANGUAGE_BASE.md says its
# language, and every `.mlenv` one is checked, so the docs cannot drift from the language:
#
#   ```mlenv            a whole program: `mlenvc check` passes (warnings allowed)
#   ```mlenv fragment   declarations that need context: appended to docs/harness.mlenv, which
#                       imports the stdlib and declares a cluster of each platform; check passes
#   ```mlenv syntax     text a test cannot check whole (a git import, a schema of the
#                       compiler's own): it parses (`mlenvc fmt`)
#
# A bare ``` fence is an error: a new block must choose. usage: doc_blocks.sh MLENVC ROOT
set -u
mlenvc=$1 root=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 count=0
for doc in README.md schema/LANGUAGE.md schema/LANGUAGE_BASE.md; do
  # Each block to $tmp/<n>.block, with "<kind> <doc>:<line>" in $tmp/<n>.what; bare fences
  # listed in $tmp/bare.
  awk -v out="$tmp" -v doc="$doc" -v base="$count" '
    /^```/ {
      if (!open) {
        open = 1; info = substr($0, 4); n++
        if (info == "") print doc ":" NR > (out "/bare")
        file = (info ~ /^mlenv( |$)/) ? sprintf("%s/%d.block", out, base + n) : ""
        if (file != "") {
          kind = info == "mlenv" ? "program" : substr(info, 7)
          print kind " " doc ":" NR > sprintf("%s/%d.what", out, base + n)
        }
      } else {
        open = 0; if (file != "") close(file); file = ""
      }
      next
    }
    open && file != "" { print > file }
  ' "$root/$doc"
  count=$((count + $(grep -c '^```' "$root/$doc")))
done
if [ -s "$tmp/bare" ]; then
  echo "code blocks without a language (tag them: mlenv, mlenv fragment, mlenv syntax, sh, text):"
  cat "$tmp/bare"
  failed=1
fi
checked=0
for what in "$tmp"/*.what; do
  [ -e "$what" ] || continue
  read -r kind where < "$what"
  block=${what%.what}.block
  file=$tmp/doc.mlenv
  case $kind in
    program) cp "$block" "$file" ;;
    fragment) cat "$here/docs/harness.mlenv" "$block" > "$file" ;;
    syntax) cp "$block" "$file" ;;
    *) echo "$where: unknown block kind \`mlenv $kind\`"; failed=1; continue ;;
  esac
  checked=$((checked + 1))
  if [ "$kind" = syntax ]; then
    output=$(cd "$tmp" && NO_COLOR=1 "$mlenvc" fmt doc.mlenv 2>&1 >/dev/null)
  else
    output=$(cd "$tmp" && NO_COLOR=1 "$mlenvc" check doc.mlenv 2>&1)
  fi
  if [ $? != 0 ]; then
    label=mlenv
    [ "$kind" = program ] || label="mlenv $kind"
    echo "$where: the \`$label\` block does not pass:"
    echo "$output"
    failed=1
  fi
done
[ $failed = 0 ] && echo "all $checked mlenv blocks of the docs pass"
exit $failed
