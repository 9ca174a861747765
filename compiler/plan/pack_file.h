#pragma once
// A git pack and its index (pack format 2, index version 2: gitformat-pack(5)) written straight
// from objects in memory. A plan's objects are new files of its own render: deltas against
// each other save little and cost most of a first plan in libgit2's packbuilder (a delta
// window over every object) and indexer (inflating, resolving and hashing every object again),
// so each object is stored whole, deflated at zlib's fastest level, as `git add` stores loose
// objects (core.loosecompression).

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace mlenv::plan {

/// One object to store: git's id of it, its type and its content (without git's header).
struct PackObject {
  enum class Type : unsigned char { Commit = 1, Tree = 2, Blob = 3 };
  std::array<unsigned char, 20> id;
  Type type = Type::Blob;
  std::string_view data;
};

/// The bytes of a pack holding `objects` in order, and of its index; `checksum` names both
/// (`pack-<checksum>.pack`, `.idx`).
struct PackFiles {
  std::string pack;
  std::string index;
  std::string checksum;  ///< the pack's trailing SHA-1, hex
};

/// Builds the pack and its index; objects are deflated on every core. Duplicate ids are
/// stored once.
PackFiles build_pack(std::vector<PackObject> objects);

/// Writes `files` into `pack_dir` (the repository's objects/pack): the pack first, then the
/// index, each under a temporary `tmp_` name and renamed, so a reader never sees an index
/// without its pack. Throws std::runtime_error on failure.
void write_pack_files(const std::string& pack_dir, const PackFiles& files);

}  // namespace mlenv::plan
