#!/bin/sh
# Refreshes the upstream schema documents of this folder from the pinned commits below, trimmed
# by trim.py. Run from anywhere: `tests/schemas/refresh.sh` downloads them from GitHub;
# `tests/schemas/refresh.sh --from DIR` trims the untrimmed files found in DIR under the same
# names instead (a machine without network). To move to a newer upstream, change a commit here,
# run the script, run the `targets.` tests and update README.md's table.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
from=""
if [ "${1:-}" = "--from" ]; then from=$2; fi

# name in this folder | repository | commit | path in the repository
sources="
kubernetes-openapi.json kubernetes-client/python ac0ee5091f0b801911c906558030e2624a26bdf8 kubernetes/swagger.json.unprocessed
openshift-openapi.json openshift/api e08a5c1671818f3cc8c1dc25c569ec7120700407 openapi/openapi.json
network-attachment-definition-crd.yaml k8snetworkplumbingwg/network-attachment-definition-client 6877a622987263c99b34cc4ad88d65e9a905a7ee artifacts/networks-crd.yaml
crds/jobset.x-k8s.io_jobsets.yaml kubernetes-sigs/jobset b83a48ede93fee0c5ed8e61429f43dd96b19e877 config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml
crds/kueue.x-k8s.io_clusterqueues.yaml kubernetes-sigs/kueue 1363002bf45186e37cb23625348e85edcf5804fa config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml
crds/kueue.x-k8s.io_localqueues.yaml kubernetes-sigs/kueue 1363002bf45186e37cb23625348e85edcf5804fa config/components/crd/bases/kueue.x-k8s.io_localqueues.yaml
crds/kueue.x-k8s.io_resourceflavors.yaml kubernetes-sigs/kueue 1363002bf45186e37cb23625348e85edcf5804fa config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml
crds/kueue.x-k8s.io_topologies.yaml kubernetes-sigs/kueue 1363002bf45186e37cb23625348e85edcf5804fa config/components/crd/bases/kueue.x-k8s.io_topologies.yaml
crds/kueue.x-k8s.io_workloadpriorityclasses.yaml kubernetes-sigs/kueue 1363002bf45186e37cb23625348e85edcf5804fa config/components/crd/bases/kueue.x-k8s.io_workloadpriorityclasses.yaml
crds/batch.volcano.sh_jobs.yaml volcano-sh/volcano 72aa384d90a51618df6724a9ab19caf1e393573f config/crd/volcano/bases/batch.volcano.sh_jobs.yaml
"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "$sources" | while read -r name repo commit path; do
  [ -n "$name" ] || continue
  src=$tmp/$(basename "$name")
  if [ -n "$from" ]; then
    cp "$from/$name" "$src"
  else
    curl -fsSL -o "$src" "https://raw.githubusercontent.com/$repo/$commit/$path"
  fi
  mkdir -p "$(dirname "$here/$name")"
  python3 "$here/trim.py" "$src" "$here/$name"
  echo "$name <- $repo@$commit:$path"
done
