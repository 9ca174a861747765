#include "compiler/base/pattern.h"

#include <memory>
#include <stdexcept>

namespace mlenv {
namespace {

using Op = Pattern::Instruction::Op;
using Bytes = std::bitset<256>;

// A pattern is trusted text (schema files, the compiler's own source), but it is still held
// to a size: counted repetitions copy their operand, and the parser recurses on groups.
constexpr std::size_t kMaxInstructions = 20000;
constexpr int kMaxGroupDepth = 32;
constexpr int kMaxRepeat = 1000;

struct Node {
  enum class Kind { Bytes, Begin, End, Concat, Alternate, Repeat } kind = Kind::Concat;
  Bytes bytes;
  std::vector<Node> children;
  int min = 0;
  int max = -1;  ///< -1: unbounded

  static Node of(Kind kind) {
    Node node;
    node.kind = kind;
    return node;
  }
};

Bytes range(unsigned char low, unsigned char high) {
  Bytes b;
  for (unsigned c = low; c <= high; ++c) b.set(c);
  return b;
}

Bytes digits() {
  return range('0', '9');
}
Bytes word() {
  return range('a', 'z') | range('A', 'Z') | digits() | range('_', '_');
}
Bytes space() {
  Bytes b;
  for (char c : std::string_view(" \t\n\r\f\v")) b.set(static_cast<unsigned char>(c));
  return b;
}

class Parser {
 public:
  Parser(std::string_view source, bool ignore_case) : s_(source), ignore_case_(ignore_case) {}

  std::optional<Node> parse(std::string& error) {
    Node node = alternate(0);
    if (error_.empty() && i_ != s_.size()) fail("unbalanced `)`");
    if (!error_.empty()) {
      error = error_ + " at offset " + std::to_string(i_);
      return std::nullopt;
    }
    return node;
  }

 private:
  void fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }
  bool more() const { return i_ < s_.size() && error_.empty(); }

  Node alternate(int depth) {
    Node alt = Node::of(Node::Kind::Alternate);
    alt.children.push_back(concat(depth));
    while (more() && s_[i_] == '|') {
      ++i_;
      alt.children.push_back(concat(depth));
    }
    return alt.children.size() == 1 ? std::move(alt.children.front()) : alt;
  }

  Node concat(int depth) {
    Node seq = Node::of(Node::Kind::Concat);
    while (more() && s_[i_] != '|' && s_[i_] != ')') seq.children.push_back(repeat(depth));
    return seq;
  }

  Node repeat(int depth) {
    Node node = atom(depth);
    while (more()) {
      char c = s_[i_];
      int min = 0, max = -1;
      if (c == '*') {
        ++i_;
      } else if (c == '+') {
        min = 1;
        ++i_;
      } else if (c == '?') {
        max = 1;
        ++i_;
      } else if (c == '{' && counted(min, max)) {
      } else {
        break;
      }
      if (node.kind == Node::Kind::Begin || node.kind == Node::Kind::End) {
        fail("quantifier after an anchor");
      }
      Node r = Node::of(Node::Kind::Repeat);
      r.min = min;
      r.max = max;
      r.children.push_back(std::move(node));
      node = std::move(r);
    }
    return node;
  }

  // `{m}`, `{m,}` or `{m,n}` at i_; false (nothing consumed) where `{` is a literal.
  bool counted(int& min, int& max) {
    std::size_t j = i_ + 1;
    auto number = [&](int& out) {
      std::size_t start = j;
      out = 0;
      while (j < s_.size() && s_[j] >= '0' && s_[j] <= '9' && j - start < 5) {
        out = out * 10 + (s_[j++] - '0');
      }
      return j > start;
    };
    if (!number(min)) return false;
    max = min;
    if (j < s_.size() && s_[j] == ',') {
      ++j;
      if (!number(max)) max = -1;
    }
    if (j >= s_.size() || s_[j] != '}') return false;
    i_ = j + 1;
    if (min > kMaxRepeat || max > kMaxRepeat || (max >= 0 && max < min)) {
      fail("invalid repetition count");
    }
    return true;
  }

  Node bytes(Bytes b) {
    if (ignore_case_) {
      for (unsigned c = 'a'; c <= 'z'; ++c) {
        if (b.test(c) || b.test(c - 'a' + 'A')) {
          b.set(c);
          b.set(c - 'a' + 'A');
        }
      }
    }
    Node n = Node::of(Node::Kind::Bytes);
    n.bytes = b;
    return n;
  }

  // The byte set of the escape after a backslash at i_ (i_ is past it on return).
  Bytes escape() {
    if (i_ >= s_.size()) {
      fail("trailing `\\`");
      return {};
    }
    char c = s_[i_++];
    switch (c) {
      case 'd':
        return digits();
      case 'D':
        return ~digits();
      case 'w':
        return word();
      case 'W':
        return ~word();
      case 's':
        return space();
      case 'S':
        return ~space();
      case 'n':
        return range('\n', '\n');
      case 't':
        return range('\t', '\t');
      case 'r':
        return range('\r', '\r');
      case 'f':
        return range('\f', '\f');
      case 'v':
        return range('\v', '\v');
      default:
        break;
    }
    // Only punctuation is escaped literally: `\b`, `\1` and friends mean something else in
    // ECMAScript, and silently reading them as letters would change a schema's meaning.
    auto u = static_cast<unsigned char>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || u >= 0x80) {
      fail(std::string("unsupported escape `\\") + c + "`");
      return {};
    }
    return range(u, u);
  }

  Bytes bracket() {
    Bytes set;
    bool negate = i_ < s_.size() && s_[i_] == '^';
    if (negate) ++i_;
    bool first = true;
    while (error_.empty()) {
      if (i_ >= s_.size()) {
        fail("unterminated `[`");
        break;
      }
      char c = s_[i_];
      if (c == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      Bytes item;
      int low = -1;
      if (c == '\\') {
        ++i_;
        item = escape();
        if (item.count() == 1) {
          for (int b = 0; b < 256; ++b) {
            if (item.test(static_cast<std::size_t>(b))) low = b;
          }
        }
      } else {
        low = static_cast<unsigned char>(c);
        item.set(static_cast<unsigned char>(c));
        ++i_;
      }
      if (low >= 0 && i_ + 1 < s_.size() && s_[i_] == '-' && s_[i_ + 1] != ']') {
        ++i_;
        int high = static_cast<unsigned char>(s_[i_]);
        if (s_[i_] == '\\') {
          ++i_;
          Bytes h = escape();
          high = -1;
          if (h.count() == 1) {
            for (int b = 0; b < 256; ++b) {
              if (h.test(static_cast<std::size_t>(b))) high = b;
            }
          }
        } else {
          ++i_;
        }
        if (high < low) {
          fail("invalid class range");
          break;
        }
        item = range(static_cast<unsigned char>(low), static_cast<unsigned char>(high));
      }
      set |= item;
    }
    Node cased = bytes(set);
    return negate ? ~cased.bytes : cased.bytes;
  }

  Node atom(int depth) {
    char c = s_[i_++];
    switch (c) {
      case '(': {
        if (depth >= kMaxGroupDepth) {
          fail("groups nested too deeply");
          return {};
        }
        if (s_.substr(i_, 2) == "?:") {
          i_ += 2;
        } else if (i_ < s_.size() && s_[i_] == '?') {
          fail("unsupported group `(?`");
          return {};
        }
        Node inner = alternate(depth + 1);
        if (i_ >= s_.size() || s_[i_] != ')') {
          fail("unterminated `(`");
          return {};
        }
        ++i_;
        return inner;
      }
      case '[':
        return bytes(bracket());
      case '.':
        return bytes(~range('\n', '\n'));
      case '^':
        return Node::of(Node::Kind::Begin);
      case '$':
        return Node::of(Node::Kind::End);
      case '\\':
        return bytes(escape());
      case '*':
      case '+':
      case '?':
        fail("quantifier without an operand");
        return {};
      default:
        return bytes(range(static_cast<unsigned char>(c), static_cast<unsigned char>(c)));
    }
  }

  std::string_view s_;
  bool ignore_case_;
  std::size_t i_ = 0;
  std::string error_;
};

class Compiler {
 public:
  explicit Compiler(std::vector<Pattern::Instruction>& program) : p_(program) {}

  bool emit(const Node& node) {
    if (p_.size() > kMaxInstructions) return false;
    switch (node.kind) {
      case Node::Kind::Bytes: {
        Pattern::Instruction& in = add(Op::Byte);
        in.bytes = node.bytes;
        return true;
      }
      case Node::Kind::Begin:
        add(Op::Begin);
        return true;
      case Node::Kind::End:
        add(Op::End);
        return true;
      case Node::Kind::Concat:
        for (const Node& child : node.children) {
          if (!emit(child)) return false;
        }
        return true;
      case Node::Kind::Alternate: {
        // split L1, next; L1: a; jump end; next: split L2, ... ; last: z; end:
        std::vector<std::size_t> jumps;
        for (std::size_t k = 0; k < node.children.size(); ++k) {
          std::size_t split = 0;
          if (k + 1 < node.children.size()) {
            split = p_.size();
            add(Op::Split).x = here() + 1;
          }
          if (!emit(node.children[k])) return false;
          if (k + 1 < node.children.size()) {
            jumps.push_back(p_.size());
            add(Op::Jump);
            p_[split].y = here();
          }
        }
        for (std::size_t j : jumps) p_[j].x = here();
        return true;
      }
      case Node::Kind::Repeat: {
        const Node& body = node.children.front();
        for (int k = 0; k < node.min; ++k) {
          if (!emit(body)) return false;
        }
        if (node.max < 0) {
          // loop: split body, out; body; jump loop; out:
          std::uint32_t loop = here();
          add(Op::Split).x = loop + 1;
          if (!emit(body)) return false;
          add(Op::Jump).x = loop;
          p_[loop].y = here();
          return true;
        }
        // Each optional copy: split body, out; body. All outs lead to the end.
        std::vector<std::size_t> splits;
        for (int k = node.min; k < node.max; ++k) {
          splits.push_back(p_.size());
          add(Op::Split).x = here() + 1;
          if (!emit(body)) return false;
        }
        for (std::size_t s : splits) p_[s].y = here();
        return true;
      }
    }
    return false;
  }

 private:
  std::uint32_t here() const { return static_cast<std::uint32_t>(p_.size()); }
  Pattern::Instruction& add(Op op) {
    p_.emplace_back();
    p_.back().op = op;
    return p_.back();
  }

  std::vector<Pattern::Instruction>& p_;
};

// The set of threads at one text position: a sparse set (Briggs and Torczon) so clearing and
// membership are O(1), as in Cox's and RE2's Pike VMs.
class ThreadSet {
 public:
  explicit ThreadSet(std::size_t size) : dense_(size), sparse_(size) {}
  bool contains(std::uint32_t pc) const {
    return sparse_[pc] < count_ && dense_[sparse_[pc]] == pc;
  }
  void insert(std::uint32_t pc) {
    sparse_[pc] = static_cast<std::uint32_t>(count_);
    dense_[count_++] = pc;
  }
  void clear() { count_ = 0; }
  std::size_t size() const { return count_; }
  std::uint32_t operator[](std::size_t i) const { return dense_[i]; }

 private:
  std::vector<std::uint32_t> dense_;
  std::vector<std::uint32_t> sparse_;
  std::size_t count_ = 0;
};

}  // namespace

std::optional<Pattern> Pattern::compile(std::string_view source, std::string* error,
                                        bool ignore_case) {
  std::string message;
  std::optional<Node> tree = Parser(source, ignore_case).parse(message);
  Pattern pattern;
  if (tree && !Compiler(pattern.program_).emit(*tree)) {
    tree.reset();
    message = "pattern too large";
  }
  if (!tree) {
    if (error) *error = message;
    return std::nullopt;
  }
  pattern.program_.emplace_back();  // Match
  return pattern;
}

Pattern Pattern::literal(std::string_view source, bool ignore_case) {
  std::string error;
  std::optional<Pattern> pattern = compile(source, &error, ignore_case);
  if (!pattern)
    throw std::logic_error("invalid built-in pattern /" + std::string(source) + "/: " + error);
  return std::move(*pattern);
}

bool Pattern::matches(std::string_view text) const {
  return run(text, true);
}
bool Pattern::search(std::string_view text) const {
  return run(text, false);
}

bool Pattern::run(std::string_view text, bool anchored) const {
  const std::size_t size = program_.size();
  ThreadSet current(size), next(size);
  std::vector<std::uint32_t> stack;
  const std::size_t n = text.size();
  // Adds pc and everything reachable from it without reading a byte; true on reaching Match
  // where a match counts here (anywhere for search, only at the end for a whole match).
  auto add = [&](ThreadSet& set, std::uint32_t start, std::size_t pos) {
    bool matched = false;
    stack.push_back(start);
    while (!stack.empty()) {
      std::uint32_t pc = stack.back();
      stack.pop_back();
      if (set.contains(pc)) continue;
      set.insert(pc);
      const Instruction& in = program_[pc];
      switch (in.op) {
        case Op::Jump:
          stack.push_back(in.x);
          break;
        case Op::Split:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Op::Begin:
          if (pos == 0) stack.push_back(pc + 1);
          break;
        case Op::End:
          if (pos == n) stack.push_back(pc + 1);
          break;
        case Op::Match:
          if (!anchored || pos == n) matched = true;
          break;
        case Op::Byte:
          break;
      }
    }
    return matched;
  };
  if (add(current, 0, 0)) return true;
  for (std::size_t pos = 0; pos < n; ++pos) {
    auto byte = static_cast<unsigned char>(text[pos]);
    next.clear();
    for (std::size_t t = 0; t < current.size(); ++t) {
      const Instruction& in = program_[current[t]];
      if (in.op == Op::Byte && in.bytes.test(byte) && add(next, current[t] + 1, pos + 1)) {
        return true;
      }
    }
    if (!anchored && add(next, 0, pos + 1)) return true;
    if (next.size() == 0 && anchored) return false;
    std::swap(current, next);
  }
  return false;
}

}  // namespace mlenv
