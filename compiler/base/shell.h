#pragma once
// Quoting for POSIX shells, shared by the scripts targets write and the commands apply prints.

#include <string>
#include <string_view>

namespace mlenv {

/// `value` as one shell word that the shell reads back as exactly `value`: single quotes, each
/// `'` written `'\''`. No character of it can end the word, start a command or expand.
std::string shell_quote(std::string_view value);

}  // namespace mlenv
