#include "log.h"

#include <unistd.h>

namespace boot {
namespace {

// One write per line, so lines of concurrent processes sharing a pipe do not interleave.
void emit(const std::string& prefix, const std::string& message) {
  std::string line = "mlenv-boot: " + prefix + message + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace

void log_info(const std::string& message) {
  emit("", message);
}

void log_warning(const std::string& message) {
  emit("warning: ", message);
}

void log_error(const std::string& message) {
  emit("error: ", message);
}

}  // namespace boot
