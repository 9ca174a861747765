#pragma once
// Quoting for POSIX shells, shared by the scripts targets write and the commands apply prints.

#include <string>
#include <string_view>

namespace mlenv {

/// `value` as one shell word that the shell reads back as exactly `value`: single quotes, each
/// `'` written `'\''`. No character of it can end the word, start a command or expand.
std::string shell_quote(std::string_view value);

/// Whether `value` reads back as itself as a bare shell word (and as a bare Dockerfile word): not
/// empty, and only ASCII letters, digits and `-_./:=+@,%`, none of which a shell expands.
bool is_plain_shell_word(std::string_view value);

/// `value` as one shell word, bare where it is plain (is_plain_shell_word), else shell_quote'd:
/// what a printed command or a generated script shows of one argument.
std::string shell_word(std::string_view value);

}  // namespace mlenv
