#pragma once
// Log lines on stderr, prefixed so they stand out from the workers' own output in `oc logs`.

#include <string>

namespace boot {

/// Prints "mlenv-boot: <message>" on stderr.
void log_info(const std::string& message);

/// Prints "mlenv-boot: warning: <message>" on stderr.
void log_warning(const std::string& message);

/// Prints "mlenv-boot: error: <message>" on stderr: the one clear line a failure ends with.
void log_error(const std::string& message);

}  // namespace boot
