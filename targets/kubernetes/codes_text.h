#pragma once
// The paragraphs about Kubernetes in the explanations of codes other platforms report too:
// compiler/diag/codes_*.def splice them in (MLENV_TARGETS_<CODE>, generated), so that the core's
// registry names no JobSet. A macro of adjacent literals, since a directive cannot hold a raw
// string of several lines.

/// E0411: the pod names of a JobSet run.
#define MLENV_KUBERNETES_E0411                                                                 \
  "On Kubernetes a run is a JobSet, whose pods are named\n"                                    \
  "`<env>-node-0-<rank>-<5 random characters>`: its webhook refuses the JobSet at apply when " \
  "the\n"                                                                                      \
  "longest such name, for the last rank, passes 63 characters (kubernetes-sigs/jobset,\n"      \
  "pkg/webhooks/jobset_webhook.go). A 51-character env name fits a Job but not 12 nodes of one.\n"

/// E0418: the rows of its table that only Kubernetes has.
#define MLENV_KUBERNETES_E0418                                                        \
  "| `topology` (Kueue), env `queue` and `priority` (Kueue) | no | yes | no | no |\n" \
  "| image `pull_secret` (the pods' imagePullSecrets) | no | yes | no | no |\n"

/// E0713: what a failed run is on Kubernetes, and where its pods' logs are.
#define MLENV_KUBERNETES_E0713                                                            \
  "On Kubernetes the run is a JobSet: its child Job is `<env>-node-0`, so its pods are\n" \
  "`-l jobset.sigs.k8s.io/jobset-name=<env>`.\n"

/// E0716: where rank 0's log is on Kubernetes.
#define MLENV_KUBERNETES_E0716 \
  "On Kubernetes the env's Job is its JobSet's child Job, `<env>-node-0`.\n"
