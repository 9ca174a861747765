#include "options.h"

#include "config.h"
#include "exit_code.h"
#include "util.h"

namespace boot {

const char* usage_text() {
  return "usage: mlenv-boot --config FILE [--node-rank N] [--nnodes N] [--rdzv HOST:PORT]\n"
         "                  [--sysfs-root DIR] [--proc-root DIR] [--dev-root DIR]\n"
         "                  [--timeout DURATION] [--dry-run] [--nccl-check] [--results FILE]\n"
         "                  [-- COMMAND ARGS...]\n";
}

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  auto usage_error = [](const std::string& message) {
    return BootError(kExitConfigError, message + " (see --help)");
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      options.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg == "--dry-run") {
      options.dry_run = true;
      continue;
    }
    if (arg == "--nccl-check") {
      options.nccl_check = true;
      continue;
    }
    // Every other flag takes a value, as "--flag VALUE" or "--flag=VALUE".
    std::string name = arg, value;
    if (size_t equals = arg.find('='); arg.starts_with("--") && equals != std::string::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw usage_error(arg.starts_with("--") ? arg + " needs a value" : "unexpected " + arg);
    }
    auto count = [&](int min) {
      std::optional<std::int64_t> number = parse_uint(value);
      if (!number || *number < min || *number > 1'000'000) {
        throw usage_error(name + " takes an integer >= " + std::to_string(min));
      }
      return static_cast<int>(*number);
    };
    if (name == "--config")
      options.config_path = value;
    else if (name == "--node-rank")
      options.node_rank = count(0);
    else if (name == "--nnodes")
      options.nnodes = count(1);
    else if (name == "--rdzv")
      options.rdzv = value;
    else if (name == "--sysfs-root")
      options.roots.sysfs = value;
    else if (name == "--proc-root")
      options.roots.proc = value;
    else if (name == "--dev-root")
      options.roots.dev = value;
    else if (name == "--results")
      options.results_path = value;
    else if (name == "--timeout") {
      options.timeout_s = parse_duration(value);
      if (!options.timeout_s) throw usage_error("--timeout takes a duration like 30s or 10m");
      // It replaces the discovery and rendezvous deadlines, so it has their bounds.
      if (std::optional<std::string> why = check_duration(*options.timeout_s, kDeadlineBounds)) {
        throw usage_error("--timeout " + *why);
      }
    } else {
      throw usage_error("unknown flag " + name);
    }
  }
  if (!options.help && options.config_path.empty()) throw usage_error("--config is required");
  return options;
}

}  // namespace boot
