#include "compiler/driver/day2_options.h"

#include <iostream>

#include "compiler/apply/record_values.h"
#include "compiler/apply/runner.h"
#include "compiler/diag/render.h"

namespace mlenv::driver {

int usage_error(const char* command, const std::string& message, const char* usage) {
  std::cerr << "mlenvc " << command << ": " << message << '\n' << usage;
  return 1;
}

bool read_target(const Options& options, const CommandLine& line, plan::day2::EnvRequest& target) {
  if (!options.error.empty()) return usage_error(line.command, options.error, line.usage) == 0;
  const std::size_t count = options.positional.size();
  if (count < line.min_args || count > line.max_args) {
    return usage_error(line.command,
                       count < line.min_args ? "missing arguments" : "too many arguments",
                       line.usage) == 0;
  }
  std::optional<int> timeout =
      plan::parse_duration(options.value("timeout").value_or(line.default_timeout));
  if (!timeout) {
    return usage_error(line.command, "--timeout is a duration like 60s or 5m (at most 720h)",
                       line.usage) == 0;
  }
  target.env = count > 0 ? options.positional[0] : "";
  target.client = options.value("kubectl").value_or("");
  std::optional<std::string> context = read_context(options, line.command);
  if (!context) return false;
  target.context = *context;
  target.timeout_seconds = *timeout;
  return true;
}

std::optional<std::string> read_context(const Options& options, const char* command) {
  const std::string context = options.value("context").value_or("");
  if (!options.value("context") || plan::valid_context_name(context)) return context;
  std::cerr << "mlenvc " << command << ": --context: `" << printable(context)
            << "` is not a kubeconfig context name (letters, digits and ._-:@/, not starting "
               "with -)\n";
  return std::nullopt;
}

std::optional<int> read_rank(const Options& options, const char* command, const char* usage) {
  std::string text = options.value("rank").value_or("0");
  bool number = !text.empty() && text.size() <= 9 &&
                text.find_first_not_of("0123456789", text[0] == '-' ? 1 : 0) == std::string::npos &&
                text != "-";
  if (!number) {
    usage_error(command, "--rank is a number, not `" + printable(text) + "`", usage);
    return std::nullopt;
  }
  return std::stoi(text);
}

std::optional<int> read_port(const Options& options, const char* command, const char* usage) {
  const std::string text = options.value("local").value_or("");
  const bool number = !text.empty() && text.size() <= 5 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const int port = number ? std::stoi(text) : 0;
  if (port >= 1 && port <= 65535) return port;
  usage_error(command, "--local is a port, 1 to 65535", usage);
  return std::nullopt;
}

int finish(int status, const Diagnostics& diagnostics) {
  SourceManager none;
  for (const Diagnostic& d : diagnostics.all()) render_text(std::cerr, none, d);
  return status;
}

}  // namespace mlenv::driver
