#pragma once
// The paragraphs about Kubernetes in the explanations of codes every kube platform reports:
// compiler/diag/codes_*.def splice them in, so that the core's registry names no JobSet.
// A macro of adjacent literals, since a directive cannot hold a raw string of several lines.

/// E0411: the pod names of a JobSet run.
#define MLENV_KUBERNETES_E0411                                                                 \
  "On Kubernetes a run is a JobSet, whose pods are named\n"                                    \
  "`<env>-node-0-<rank>-<5 random characters>`: its webhook refuses the JobSet at apply when " \
  "the\n"                                                                                      \
  "longest such name, for the last rank, passes 63 characters (kubernetes-sigs/jobset,\n"      \
  "pkg/webhooks/jobset_webhook.go). A 51-character env name fits a Job but not 12 nodes of one.\n"
