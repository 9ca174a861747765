#pragma once
// Completion: what may be written at the cursor. The line being typed rarely parses, so the
// document is parsed with that line blanked out (same length: offsets stay put), and the line's
// own text says what is expected: a field of the block around the cursor, a value after `=`
// (an enum member, a declared name), a declaration after `extends`, a `std/...` path in an
// import.

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/check/types.h"
#include "compiler/lsp/navigation.h"
#include "runtime/json.h"

namespace mlenv::lsp {

/// The completion items (LSP CompletionItem objects) at byte `offset` of `text`, the current
/// text of the document checked as `root` in `view` (nullptr when its check kept no tree).
boot::Json complete(std::string_view text, std::uint32_t offset, const ProgramView& view,
                    const check::LoadedFile* root, const check::TypeRegistry& types);

}  // namespace mlenv::lsp
