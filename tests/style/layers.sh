#!/usr/bin/env bash
# The layers point one way (targets/README.md, "Layers"): the core (compiler/) reaches the
# targets only through the seam, the headers at targets/'s top and targets/common/; no target
# folder includes another, except that openshift/ and kubernetes/ share kube/; the seam names
# no target (registry.cc, the one list of them, aside); runtime/ stands alone, since every
# output tree builds it without this project. Then the libraries: CMake's link graph has no
# cycle.
# layers.allow lists the includes not yet moved behind the seam, one `file -> header` a line;
# a listed include that is gone fails too, so the list only shrinks.
set -uo pipefail
root=$1
cmake_bin=${2:-cmake}
cd "$root" || exit 2
allow=tests/style/layers.allow
status=0
used=$(mktemp)
graph_dir=$(mktemp -d)
trap 'rm -rf "$used" "$graph_dir"' EXIT

# The folder under targets/ a path is in ("" for the seam's own top-level files).
target_folder() {
  local rest=${1#targets/}
  case "$rest" in */*) echo "${rest%%/*}" ;; *) echo "" ;; esac
}

# Whether FILE may include HEADER (both paths from the root).
allowed() {
  local file=$1 header=$2 from to
  case "$file" in
    runtime/*) [[ "$header" != compiler/* && "$header" != targets/* ]]; return ;;
  esac
  [[ "$header" == targets/* ]] || return 0
  to=$(target_folder "$header")
  [[ -z "$to" || "$to" == common ]] && return 0
  case "$file" in
    compiler/*) return 1 ;;
    targets/registry.cc) return 0 ;;
    targets/*)
      from=$(target_folder "$file")
      [[ "$from" == "$to" ]] && return 0
      [[ "$to" == kube && ("$from" == openshift || "$from" == kubernetes) ]] && return 0
      return 1
      ;;
  esac
  return 0
}

while IFS=: read -r file line; do
  header=$(sed -E 's/^#include "([^"]+)".*/\1/' <<<"$line")
  allowed "$file" "$header" && continue
  if grep -qxF "$file -> $header" "$allow"; then
    echo "$file -> $header" >>"$used"
    continue
  fi
  echo "layers: $file includes $header, against the layers"
  status=1
done < <(git ls-files 'compiler/*' 'targets/*' 'runtime/*' | grep -E '\.(cc|h|cpp|hpp|cu|def)$' |
  xargs grep -H -E '^#include "')

while IFS= read -r entry; do
  [[ -z "$entry" || "$entry" == \#* ]] && continue
  if ! grep -qxF "$entry" "$used"; then
    echo "layers: $allow lists \`$entry\`, which no longer needs it: remove the line"
    status=1
  fi
done <"$allow"

# The link graph of the project's own libraries, as CMake computes it, must be acyclic.
if ! "$cmake_bin" -S "$root" -B "$graph_dir/build" -DMLENV_TESTS=OFF \
  --graphviz="$graph_dir/graph.dot" >"$graph_dir/configure.log" 2>&1; then
  cat "$graph_dir/configure.log"
  echo "layers: cmake could not configure the project to draw its link graph"
  exit 1
fi
cycle=$(python3 - "$graph_dir/graph.dot" "$root/tests/style/layers_cycles.allow" <<'EOF'
import re, sys
names, edges = {}, {}
for line in open(sys.argv[1]):
    node = re.match(r'\s*"(node\d+)" \[ label = "([^"]+)"', line)
    if node:
        names[node.group(1)] = node.group(2)
    edge = re.match(r'\s*"(node\d+)" -> "(node\d+)"', line)
    if edge:
        edges.setdefault(edge.group(1), set()).add(edge.group(2))
allowed = set()
for line in open(sys.argv[2]):
    line = line.strip()
    if line and not line.startswith('#'):
        allowed.add(line)
ours = {n for n, label in names.items() if label.startswith('mlenv')}
found = set()
def visit(start):
    stack, path = [(start, iter(sorted(edges.get(start, ()))))], [start]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop(); path.pop(); continue
        if child not in ours:
            continue
        if child == start:
            found.add(', '.join(sorted(names[n] for n in path)))
        elif child not in path and child > start:
            stack.append((child, iter(sorted(edges.get(child, ())))))
            path.append(child)
for node in sorted(ours):
    visit(node)
bad = sorted(c for c in found if c not in allowed)
stale = sorted(allowed - found)
for c in bad:
    print('layers: a cycle of libraries: ' + c)
for c in stale:
    print('layers: layers_cycles.allow lists `' + c + '`, which no longer exists: remove the line')
EOF
)
if [ -n "$cycle" ]; then
  echo "$cycle"
  status=1
fi
[ $status -eq 0 ] && echo "layers: every include and library points one way"
exit $status
