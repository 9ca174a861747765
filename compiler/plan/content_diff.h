#pragma once
// What changed inside a text: the fields of a JSON document (boot.json, in its ConfigMap and
// beside it) or the lines of any other file (a Dockerfile). A reviewer reads `nnodes: 2 -> 1`,
// not "(1881 bytes of text) -> (1881 bytes of text)".

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "compiler/plan/change.h"

namespace mlenv::plan {

/// The field changes between two JSON objects, with paths under `prefix` (`data["boot.json"]`
/// gives `data["boot.json"].nnodes`); nothing when either text is not a JSON object.
std::optional<std::vector<FieldChange>> json_changes(const std::string& prefix,
                                                     const std::string& before,
                                                     const std::string& after);

/// The changed lines between two texts: `@@ line N` before each run of changes, then `- old`
/// and `+ new` lines. At most `max_lines` lines; the rest is counted in a last line. Texts too
/// long to compare line by line (over 5,000 lines) give one line saying how many changed.
std::vector<std::string> line_changes(const std::string& before, const std::string& after,
                                      std::size_t max_lines = 40);

}  // namespace mlenv::plan
