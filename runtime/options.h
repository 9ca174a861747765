#pragma once
// The command line of mlenv-boot (runtime/DESIGN.md "Interface").

#include <optional>
#include <string>
#include <vector>

#include "probe.h"

namespace boot {

/// Everything the command line says.
struct Options {
  std::string config_path;
  std::optional<int> node_rank;
  std::optional<int> nnodes;
  std::optional<std::string> rdzv;  ///< HOST:PORT of rank 0's rendezvous, instead of DNS names
  ProbeRoots roots;
  std::optional<double> timeout_s;  ///< overrides boot.json's discovery and rendezvous timeouts
  bool dry_run = false;
  bool nccl_check = false;
  std::string results_path = "results.json";
  std::vector<std::string> command;  ///< after "--"; overrides boot.json's command
  bool help = false;
};

/// Parses argv; throws BootError(kExitConfigError) on a bad flag.
Options parse_options(const std::vector<std::string>& args);

/// The usage text for --help.
const char* usage_text();

}  // namespace boot
