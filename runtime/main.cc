// mlenv-boot: the NCCL bootstrap runtime, PID 1 of every pod of an mlenv environment.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "boot.h"
#include "collective.h"
#include "exit_code.h"
#include "log.h"
#include "options.h"

int main(int argc, char** argv) {
  try {
    // A rail test's child (collective_nccl.cc) is this binary with one variable set.
    if (std::optional<int> code = boot::run_rail_step_child()) return *code;
    boot::Options options = boot::parse_options(std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::fputs(boot::usage_text(), stdout);
      return boot::kExitOk;
    }
    return boot::run_boot(options);
  } catch (const boot::BootError& error) {
    boot::log_error(error.what());
    return error.code();
  } catch (const std::exception& error) {
    boot::log_error(std::string("unexpected failure: ") + error.what());
    return boot::kExitSystemError;
  }
}
