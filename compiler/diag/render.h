#pragma once
// Rendering diagnostics for people (text with source line and caret) and tools (JSON lines).

#include <ostream>

#include "compiler/diag/diagnostic.h"

namespace mlenv {

/// `file:line:col: error[E0302]: message`, the source line, a caret under the range, notes.
void render_text(std::ostream& out, const SourceManager& sources, const Diagnostic& diagnostic,
                 bool color = false);
/// One JSON object per line: file, byte range, line/column range, code, severity, message, notes.
void render_json(std::ostream& out, const SourceManager& sources, const Diagnostic& diagnostic);
/// Escapes a string for inclusion in JSON (without the surrounding quotes); control
/// characters and DEL become `\uXXXX`.
std::string json_escape(std::string_view text);
/// ... appended to `out` (no temporary string: plan.json and boot.json of a fleet are many).
void append_json_escaped(std::string& out, std::string_view text);

/// `text` safe to show on a terminal or in a commit message: control characters (C0, DEL and
/// C1, including ESC and CR, which could rewrite what was printed before) become `\u00XX`;
/// newlines are kept when `keep_newlines`. Printable bytes and valid UTF-8 stay as they are.
std::string printable(std::string_view text, bool keep_newlines = false);

}  // namespace mlenv
