#!/usr/bin/env bash
# Each platform is one folder (targets/README.md): the words only one platform knows appear
# in the compiler's sources only under that platform's folder, and no source spells a platform's
# name but ir::platform_name. Generic code asks the provider instead (targets/provider.h).
# platform_words.allow lists the files not yet moved behind a provider, one `folder file` a
# line; a listed file that no longer needs it fails too, so the list only shrinks.
set -uo pipefail
root=$1
cd "$root" || exit 2
allow=tests/style/platform_words.allow

sources() {
  find compiler targets -type f \( -name '*.cc' -o -name '*.h' -o -name '*.def' \
    \) | sort
}

status=0
used=$(mktemp)
trap 'rm -f "$used"' EXIT

# words FOLDER GREP-FLAGS REGEX: every file outside FOLDER holding REGEX must be allowed.
words() {
  local folder=$1 flags=$2 regex=$3 file
  while IFS= read -r file; do
    case "$file" in "$folder"/*) continue ;; esac
    if grep -qxF "$folder $file" "$allow"; then
      echo "$folder $file" >>"$used"
      continue
    fi
    echo "platform_words: $file names what only $folder knows:"
    grep -n $flags -E "$regex" "$file" | head -5
    status=1
  done < <(sources | xargs grep -l $flags -E "$regex")
}

words targets/slurm -i 'sbatch|squeue|\bsrun\b|scancel|sacct|enroot|pyxis'
words targets/openshift '' 'BuildConfig|ImageStream|SecurityContextConstraints|\bSCCs?\b|start-build|\bistag\b'
words targets/kubernetes -i 'jobset|kueue'

# A platform's name as a string is spelled once, by ir::platform_name.
while IFS= read -r hit; do
  echo "platform_words: a platform's name compared as a string: $hit"
  status=1
done < <(sources | grep -v '^compiler/ir/program.h$' |
  xargs grep -nE '"(openshift|kubernetes|slurm)"')

while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  if ! grep -qxF "$line" "$used"; then
    echo "platform_words: $allow lists \`$line\`, which no longer needs it: remove the line"
    status=1
  fi
done <"$allow"
exit $status
