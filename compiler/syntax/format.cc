#include "compiler/syntax/format.h"

#include <algorithm>

#include "compiler/base/source.h"

namespace mlenv::syntax {
namespace {

constexpr std::size_t kWidth = 100;

class Printer {
 public:
  Printer(std::string_view text, const ast::File& file) : text_(text), comments_(file.comments) {}

  std::string print(const ast::File& file) {
    const ast::Item* previous = nullptr;
    for (const ast::Item& item : file.items) {
      const ast::Located& at = located(item);
      bool imports =
          previous && boost::get<ast::Import>(previous) && boost::get<ast::Import>(&item);
      if (previous && (!imports || blank_between(at.begin))) blank();
      comments_before(at.begin, 0);
      print_item(item);
      end_line(at.end);
      previous = &item;
    }
    comments_before(static_cast<std::uint32_t>(text_.size()), 0);
    return out_;
  }

 private:
  static const ast::Located& located(const ast::Item& item) {
    return boost::apply_visitor([](const auto& node) -> const ast::Located& { return node; }, item);
  }

  // Only whitespace lies between the last printed node and `pos`: two newlines make a blank line.
  bool blank_between(std::uint32_t pos) const { return newlines(last_end_, pos) >= 2; }

  // One blank line, never two.
  void blank() {
    if (!out_.empty() &&
        out_.compare(out_.size() - std::min<std::size_t>(2, out_.size()), 2, "\n\n") != 0) {
      out_ += '\n';
    }
  }

  bool has_comment(std::uint32_t begin, std::uint32_t end) const {
    return std::any_of(comments_.begin(), comments_.end(),
                       [&](const ast::Located& c) { return c.begin >= begin && c.begin < end; });
  }

  // A comment on a line of its own between `begin` and `end` (not one trailing `begin`'s line).
  bool has_own_line_comment(std::uint32_t begin, std::uint32_t end) const {
    return std::any_of(comments_.begin(), comments_.end(), [&](const ast::Located& c) {
      return c.begin >= begin && c.begin < end &&
             text_.substr(begin, c.begin - begin).find('\n') != std::string_view::npos;
    });
  }

  // Comments that start before `pos` and were not printed yet, each on its own line.
  void comments_before(std::uint32_t pos, std::size_t indent) {
    while (next_comment_ < comments_.size() && comments_[next_comment_].begin < pos) {
      const ast::Located& c = comments_[next_comment_++];
      if (blank_between(c.begin) && !at_block_start_) blank();
      out_ += std::string(indent, ' ');
      out_ += text_.substr(c.begin, c.end - c.begin);
      out_ += '\n';
      last_end_ = c.end;
      at_block_start_ = false;
    }
  }

  // Comments before `pos`, then a blank line if the source had one right before `pos`.
  void leading(std::uint32_t pos, std::size_t indent) {
    comments_before(pos, indent);
    if (!at_block_start_ && blank_between(pos)) blank();
  }

  // Ends the current line, keeping a comment that followed `end` on the same source line.
  void end_line(std::uint32_t end) {
    last_end_ = std::max(last_end_, end);
    if (next_comment_ < comments_.size()) {
      const ast::Located& c = comments_[next_comment_];
      // Only a comment that directly follows `end` (separators aside) trails it: one after
      // more tokens of the line (`a = 1; b = 2 }  // c`) trails what ends there, so a second
      // run, which sees it elsewhere, puts it in the same place.
      std::string_view gap = text_.substr(end, c.begin >= end ? c.begin - end : 0);
      if (c.begin >= end && gap.find_first_not_of(" \t,;") == std::string_view::npos) {
        out_ += "  ";
        out_ += text_.substr(c.begin, c.end - c.begin);
        last_end_ = c.end;
        ++next_comment_;
      }
    }
    out_ += '\n';
    at_block_start_ = false;
  }

  void print_item(const ast::Item& item) {
    if (const auto* import = boost::get<ast::Import>(&item)) {
      out_ += "import " + string(import->path, 0);
      if (import->alias) out_ += " as " + import->alias->name;
    } else if (const auto* decl = boost::get<ast::Decl>(&item)) {
      out_ += decl->kind.name + " " + decl->name.name;
      if (decl->extends) out_ += " extends " + ref(*decl->extends);
      out_ += " ";
      block(decl->body, 0);
    } else if (const auto* schema = boost::get<ast::Schema>(&item)) {
      out_ += "schema " + schema->name.name + " {";
      if (schema->fields.empty()) {
        out_ += "}";
        return;
      }
      out_ += '\n';
      at_block_start_ = true;
      for (const ast::Field& field : schema->fields) {
        leading(field.begin, 2);
        out_ += "  " + field.name.name + (field.optional ? "?" : "") + ": " + type(field.type);
        if (field.default_value) out_ += " = " + inline_value(*field.default_value, 2);
        end_line(field.end);
      }
      comments_before(schema->end - 1, 2);
      out_ += "}";
    } else {
      const auto& enumeration = boost::get<ast::Enum>(item);
      out_ += "enum " + enumeration.name.name + " {";
      bool one_line = !has_comment(enumeration.begin, enumeration.end);
      std::string members;
      for (const ast::Identifier& m : enumeration.members) {
        members += (members.empty() ? " " : ", ") + m.name;
      }
      if (one_line && out_.size() - out_.rfind('\n') + members.size() < kWidth) {
        out_ += members + (members.empty() ? "}" : " }");
        return;
      }
      out_ += '\n';
      at_block_start_ = true;
      for (const ast::Identifier& m : enumeration.members) {
        leading(m.begin, 2);
        out_ += "  " + m.name + ",";
        end_line(m.end);
      }
      comments_before(enumeration.end - 1, 2);
      out_ += "}";
    }
  }

  static std::string type(const ast::TypeExpr& t) {
    std::string out = t.name.name;
    if (t.args.empty()) return out;
    out += '(';
    for (std::size_t i = 0; i < t.args.size(); ++i) {
      if (i) out += ", ";
      if (const auto* nested = boost::get<ast::TypeExpr>(&t.args[i])) {
        out += type(*nested);
      } else if (const auto* range = boost::get<ast::Range>(&t.args[i])) {
        if (range->low) out += std::to_string(*range->low);
        out += "..";
        if (range->high) out += std::to_string(*range->high);
      } else {
        out += "/" + boost::get<ast::Pattern>(t.args[i]).text + "/";
      }
    }
    return out + ')';
  }

  static std::string ref(const ast::Ref& r) {
    std::string out;
    for (const std::string& part : r.path) out += (out.empty() ? "" : ".") + part;
    return out;
  }

  static std::string escape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '$' && i + 1 < s.size() && s[i + 1] == '{') {
        out += "\\$";
      } else if (static_cast<unsigned char>(c) < 0x20) {
        static const char* kHex = "0123456789abcdef";
        out += "\\u{";
        out += kHex[(c >> 4) & 0xF];
        out += kHex[c & 0xF];
        out += '}';
      } else {
        out += c;
      }
    }
    return out;
  }

  std::string string(const ast::StringLit& s, std::size_t indent) const {
    if (s.heredoc) {
      std::string_view source = text_.substr(s.begin + 2);
      std::size_t tag_end = 0;
      while (tag_end < source.size() &&
             (std::isalnum(static_cast<unsigned char>(source[tag_end])) || source[tag_end] == '_' ||
              source[tag_end] == '-')) {
        ++tag_end;
      }
      std::string tag(source.substr(0, tag_end));
      std::string out = "<<" + tag + "\n";
      const std::string& body = boost::get<std::string>(s.parts.at(0));
      std::size_t start = 0;
      while (start < body.size()) {
        std::size_t nl = body.find('\n', start);
        std::string line = body.substr(start, nl - start);
        out += line.empty() ? "\n" : std::string(indent + 2, ' ') + line + "\n";
        start = nl + 1;
      }
      return out + std::string(indent + 2, ' ') + tag;
    }
    std::string out = "\"";
    for (const auto& part : s.parts) {
      if (const auto* text = boost::get<std::string>(&part)) {
        out += escape(*text);
      } else {
        out += "${" + ref(boost::get<ast::Interpolation>(part).ref) + "}";
      }
    }
    return out + "\"";
  }

  static bool is_scalar(const ast::Expr& e) {
    return !boost::get<ast::List>(&e) && !boost::get<ast::Block>(&e);
  }

  // A value on one line, or "" when it cannot be (multi-line text, comments inside, nesting).
  std::string inline_value(const ast::Expr& e, std::size_t indent) const {
    if (const auto* s = boost::get<ast::StringLit>(&e)) return s->heredoc ? "" : string(*s, indent);
    if (const auto* n = boost::get<ast::Number>(&e)) return n->text;
    if (const auto* b = boost::get<ast::Bool>(&e)) return b->value ? "true" : "false";
    if (const auto* r = boost::get<ast::Ref>(&e)) return ref(*r);
    const ast::Located& at = ast::located(e);
    if (has_comment(at.begin, at.end)) return "";
    if (const auto* list = boost::get<ast::List>(&e)) {
      std::string out = "[";
      for (const ast::Expr& item : list->items) {
        bool nested_ok =
            is_scalar(item) || (boost::get<ast::Block>(&item) && list->items.size() == 1);
        std::string one = nested_ok ? inline_value(item, indent) : "";
        if (one.empty()) return "";
        out += (out.size() > 1 ? ", " : "") + one;
      }
      return out + "]";
    }
    const auto& block = boost::get<ast::Block>(e);
    if (block.entries.empty()) return "{}";
    std::string out = "{ ";
    for (const ast::Entry& entry : block.entries) {
      if (!is_scalar(entry.value)) return "";
      std::string one = inline_value(entry.value, indent);
      if (one.empty()) return "";
      out += (out.size() > 2 ? ", " : "") + std::string(entry.is_final ? "final " : "") +
             key(entry.key) + (entry.op == ast::Op::Append ? " += " : " = ") + one;
    }
    return out + " }";
  }

  static std::string key(const ast::Key& k) {
    return k.quoted ? "\"" + escape(k.text) + "\"" : k.text;
  }

  // Prints `e` starting at the current column; multi-line forms indent by `indent`.
  void value(const ast::Expr& e, std::size_t indent, std::size_t column) {
    if (const auto* b = boost::get<ast::Block>(&e)) return block(*b, indent);
    std::string one = inline_value(e, indent);
    if (const auto* list = boost::get<ast::List>(&e);
        list && (one.empty() || column + one.size() > kWidth)) {
      out_ += "[\n";
      at_block_start_ = true;
      for (const ast::Expr& item : list->items) {
        const ast::Located& at = ast::located(item);
        leading(at.begin, indent + 2);
        out_ += std::string(indent + 2, ' ');
        std::string inline_item =
            boost::get<ast::Block>(&item) ? inline_value(item, indent + 2) : "";
        if (!inline_item.empty() && indent + 2 + inline_item.size() + 1 <= kWidth) {
          out_ += inline_item;
        } else {
          value(item, indent + 2, indent + 2);
        }
        out_ += ',';
        end_line(at.end);
      }
      comments_before(list->end - 1, indent + 2);
      out_ += std::string(indent, ' ') + "]";
      return;
    }
    if (const auto* s = boost::get<ast::StringLit>(&e); s && s->heredoc) {
      out_ += string(*s, indent);
      return;
    }
    out_ += one;
  }

  void block(const ast::Block& b, std::size_t indent) {
    if (b.entries.empty() && !has_comment(b.begin, b.end)) {
      out_ += "{}";
      return;
    }
    out_ += "{\n";
    at_block_start_ = true;
    const std::string pad(indent + 2, ' ');
    // Runs of one-line entries, not broken by blank lines or comments, align their `=`.
    std::size_t i = 0;
    while (i < b.entries.size()) {
      std::size_t run_end = i;
      std::size_t width = 0;
      while (run_end < b.entries.size()) {
        const ast::Entry& entry = b.entries[run_end];
        // A comment trailing the previous entry keeps the run (so its `=` stays aligned
        // whether the comment was there first or moved there by a previous run).
        if (run_end > i && (has_own_line_comment(b.entries[run_end - 1].end, entry.begin) ||
                            newlines(b.entries[run_end - 1].end, entry.begin) > 1)) {
          break;
        }
        if (!single_line(entry, indent + 2)) {
          if (run_end == i) ++run_end;
          break;
        }
        width = std::max(width, lhs(entry).size());
        ++run_end;
      }
      for (; i < run_end; ++i) {
        const ast::Entry& entry = b.entries[i];
        leading(entry.begin, indent + 2);
        std::string left = lhs(entry);
        out_ += pad + left;
        if (entry.block_form && boost::get<ast::Block>(&entry.value)) {
          out_ += " ";
        } else {
          if (single_line(entry, indent + 2)) out_ += std::string(width - left.size(), ' ');
          out_ += entry.op == ast::Op::Append ? " += " : " = ";
        }
        value(entry.value, indent + 2, out_.size() - out_.rfind('\n') - 1);
        end_line(entry.end);
      }
    }
    comments_before(b.end - 1, indent + 2);
    out_ += std::string(indent, ' ') + "}";
  }

  std::size_t newlines(std::uint32_t from, std::uint32_t to) const {
    return static_cast<std::size_t>(
        std::count(text_.begin() + from, text_.begin() + std::max(from, to), '\n'));
  }

  static std::string lhs(const ast::Entry& entry) {
    return (entry.is_final ? "final " : "") + key(entry.key);
  }

  bool single_line(const ast::Entry& entry, std::size_t indent) const {
    if (boost::get<ast::Block>(&entry.value)) return false;
    std::string one = inline_value(entry.value, indent);
    return !one.empty() && indent + lhs(entry).size() + 3 + one.size() <= kWidth;
  }

  std::string_view text_;
  const std::vector<ast::Located>& comments_;
  std::size_t next_comment_ = 0;
  std::uint32_t last_end_ = 0;
  bool at_block_start_ = true;
  std::string out_;
};

}  // namespace

std::string format_file(std::string_view text, const ast::File& file) {
  // The byte order mark stays: the user's editor wrote it and would write it again.
  return std::string(text.substr(0, byte_order_mark_size(text))) + Printer(text, file).print(file);
}

}  // namespace mlenv::syntax
