#pragma once
// The compiler's version, recorded in every plan.json.

namespace mlenv {

inline constexpr const char* kCompilerVersion = "0.1.0";

}  // namespace mlenv
