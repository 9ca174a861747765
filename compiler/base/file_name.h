#pragma once
// A path made into one file name, for files named after a source (plans' `_inputs/`).

#include <string>
#include <string_view>

namespace mlenv {

/// `path` as one file name: letters, digits, `.`, `_` and `-` kept, every other byte `%XX`
/// (`examples/lab.mlenv` -> `examples%2Flab.mlenv`), so no path can leave its directory.
std::string escape_file_name(std::string_view path);

}  // namespace mlenv
