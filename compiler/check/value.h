#pragma once
// Typed values: what declarations evaluate to after merging. Each value remembers where it
// was written, and each block field whether it is `final`, for diagnostics.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/base/source.h"

namespace mlenv::check {

struct SchemaDef;

struct Value;
using ValuePtr = std::shared_ptr<Value>;

/// A list's items, read like a vector. Copies share one buffer: appending to a copy whose items
/// end where the buffer ends extends the buffer in place, and every copy still sees only its own
/// length (as Go's slices do). So an `extends` chain whose links each `+=` costs O(items in
/// all), not O(links^2); a copy that is appended to after another copy diverged gets its own
/// buffer first.
class ValueList {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const ValuePtr* begin() const { return buffer_ ? buffer_->data() : nullptr; }
  const ValuePtr* end() const { return begin() + size_; }
  const ValuePtr& operator[](std::size_t i) const { return (*buffer_)[i]; }
  /// Items an `append` of `more` would write: `more`, plus this list's own when it must copy.
  std::size_t append_cost(std::size_t more) const;
  void push_back(ValuePtr item);
  void append(const ValueList& more);

 private:
  bool owns_end() const { return buffer_ && buffer_->size() == size_; }

  std::shared_ptr<std::vector<ValuePtr>> buffer_;
  std::size_t size_ = 0;
};

/// A field of a block value.
struct Slot {
  std::string name;
  std::shared_ptr<Value> value;
  SourceRange assigned;  ///< the entry that set it
  SourceRange final_at;  ///< the `final` entry that locked it; invalid when not final
};

/// Where each name of a large block is among its slots. Slots are only ever appended, so the
/// index covers the first `indexed` and catches up on lookup. A copy holds none and builds its
/// own when looked up (a clone costs no more than copying its slots), and a small block none
/// at all (one pointer).
class SlotIndex {
 public:
  SlotIndex() = default;
  SlotIndex(const SlotIndex&) {}
  SlotIndex& operator=(const SlotIndex&) {
    index_.reset();
    return *this;
  }
  /// The position of `name` among `slots`, or nullopt.
  std::optional<std::size_t> find(const std::vector<Slot>& slots, std::string_view name);

 private:
  // Hashes names as string_view, so a lookup by a literal builds no string.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  struct Index {
    std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>>
        positions;  ///< name -> its first slot
    std::size_t indexed = 0;
  };
  std::unique_ptr<Index> index_;
};

struct Value {
  enum class Kind { String, Int, Bool, Quantity, Duration, Enum, List, Block };
  Kind kind = Kind::String;
  std::string text;         ///< String, Quantity (as written), Duration (canonical), Enum member
  std::int64_t number = 0;  ///< Int, Bool, Duration in milliseconds
  ValueList items;          ///< List
  std::vector<Slot> slots;  ///< Block, in assignment order
  const SchemaDef* schema = nullptr;  ///< Block typed by a schema; nullptr for maps
  std::string decl;                   ///< Block that is a declaration's value: its name
  SourceRange decl_range;             ///< ... and where it is declared
  /// ... and whether it, or what it extends, reported errors: it may lack what was wrong, so
  /// the rules of envs that use it stay silent rather than report what follows from those.
  bool had_errors = false;
  /// Block: complete() has filled its defaults. A cluster's or image's value is shared by its
  /// envs, and each env's completion walks it once, not once per env.
  bool completed = false;
  /// Block fields whose assignment was an error: not "missing" (E0303), already explained.
  std::vector<std::string> failed_fields;
  SourceRange range;  ///< where the value was written
  /// Blocks of more than kScannedSlots slots are looked up by hash: a map of 380,000 keys was
  /// looked up by scanning at every key (250 s to check). Maintained by slot(), never by hand.
  mutable SlotIndex slot_index;
  static constexpr std::size_t kScannedSlots = 32;

  // By string_view: rules and lowering ask for fields by literal name, with no string built.
  Slot* slot(std::string_view name);
  const Slot* slot(std::string_view name) const;
  const Value* get(std::string_view name) const;
  /// Adds `name` to `failed_fields` once: a chain of `extends` that fails the same field at
  /// every link keeps one entry, not one per link copied into every child.
  void mark_failed(const std::string& name);
};

/// A shallow copy: children stay shared until written through `unshare` (copy on write), so
/// `extends` and references cost one node, not a whole tree.
ValuePtr clone(const Value& value);
/// Makes `value` the only owner of its node before it is changed, so a child never changes
/// its parent's (or any other sharer's) value.
Value& unshare(ValuePtr& value);

}  // namespace mlenv::check
