#include "process_env.h"

extern char** environ;

namespace boot {

EnvMap read_environ() {
  EnvMap env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string text = *entry;
    size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    env.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return env;
}

std::optional<std::string> lookup(const EnvMap& env, const std::string& name) {
  auto found = env.find(name);
  if (found == env.end()) return std::nullopt;
  return found->second;
}

std::vector<std::string> to_envp(const EnvMap& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace boot
