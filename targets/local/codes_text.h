#pragma once
// The paragraphs about this machine's platform in the explanations of codes other platforms
// report too: compiler/diag/codes_*.def splice them in (MLENV_TARGETS_<CODE>, generated).
// A macro of adjacent literals, since a directive cannot hold a raw string of several lines.

/// E0755: what a local env offers instead of sync, port-forward and urls.
#define MLENV_LOCAL_E0755                                                                    \
  "\nAn env of a `platform = local` cluster is processes of this machine, run in its plan\n" \
  "directory: copy files there, and reach its ports on localhost.\n"
