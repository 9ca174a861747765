#pragma once
// A small deterministic YAML writer: block style, keys in the order they were built, and every
// string that a YAML 1.1 or 1.2 reader could take for a number, boolean, null or timestamp
// written in double quotes (yaml-cpp 0.7's emitter does not quote them).

#include <string>
#include <string_view>

#include "targets/common/value.h"

namespace mlenv::target {

/// Appends `value` as one YAML document (no `---`), ending with a newline.
void write_yaml(std::string& out, const Value& value);
/// `value` as one YAML document.
std::string to_yaml(const Value& value);
/// Whether `text` must be quoted to be read back as this exact string.
bool yaml_needs_quotes(std::string_view text);

}  // namespace mlenv::target
