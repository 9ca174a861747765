#pragma once
// The process environment as a value, so identity and environment rules are pure functions that
// tests call with fixtures instead of mutating the test process's own environment.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace boot {

/// Variable name to value.
using EnvMap = std::map<std::string, std::string>;

/// A copy of this process's environment.
EnvMap read_environ();

/// The value of a variable, or nothing when unset.
std::optional<std::string> lookup(const EnvMap& env, const std::string& name);

/// NAME=VALUE strings for execve, in name order.
std::vector<std::string> to_envp(const EnvMap& env);

}  // namespace boot
