#include "compiler/plan/pack_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "compiler/base/atomic_file.h"
#include "compiler/base/parallel.h"
#include "compiler/base/sha256.h"

namespace mlenv::plan {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

void put_u64(std::string& out, std::uint64_t v) {
  put_u32(out, static_cast<std::uint32_t>(v >> 32));
  put_u32(out, static_cast<std::uint32_t>(v));
}

std::string_view bytes_of(const std::array<unsigned char, 20>& id) {
  return {reinterpret_cast<const char*>(id.data()), id.size()};
}

// An entry's header: the type in bits 4-6 of the first byte, the size in its low 4 bits and
// then 7 bits a byte, least significant first; the high bit says another byte follows.
std::string entry_header(PackObject::Type type, std::size_t size) {
  std::string out;
  unsigned char byte = static_cast<unsigned char>((static_cast<unsigned>(type) << 4) | (size & 15));
  size >>= 4;
  while (size != 0) {
    out += static_cast<char>(byte | 0x80);
    byte = static_cast<unsigned char>(size & 0x7f);
    size >>= 7;
  }
  out += static_cast<char>(byte);
  return out;
}

// The entry as it lies in the pack: its header, then the content as one zlib stream.
std::string pack_entry(const PackObject& object) {
  std::string out = entry_header(object.type, object.data.size());
  uLongf bound = compressBound(static_cast<uLong>(object.data.size()));
  std::size_t start = out.size();
  out.resize(start + bound);
  int code = compress2(reinterpret_cast<Bytef*>(out.data() + start), &bound,
                       reinterpret_cast<const Bytef*>(object.data.data()),
                       static_cast<uLong>(object.data.size()), Z_BEST_SPEED);
  if (code != Z_OK) throw std::runtime_error("deflating a git object failed");
  out.resize(start + bound);
  return out;
}

struct IndexRow {
  std::array<unsigned char, 20> id;
  std::uint32_t crc = 0;
  std::uint64_t offset = 0;
};

// Index version 2: magic, version, the fan-out table, the sorted ids, their CRC-32s, their
// offsets (31 bits, or an index into the 64-bit table), the pack's checksum, its own checksum.
std::string build_index(std::vector<IndexRow> rows, const std::array<unsigned char, 20>& pack_sum) {
  std::sort(rows.begin(), rows.end(),
            [](const IndexRow& a, const IndexRow& b) { return a.id < b.id; });
  std::string out("\xfftOc", 4);
  put_u32(out, 2);
  std::size_t row = 0;
  for (unsigned first = 0; first < 256; ++first) {
    while (row < rows.size() && rows[row].id[0] <= first) ++row;
    put_u32(out, static_cast<std::uint32_t>(row));
  }
  for (const IndexRow& r : rows) out += bytes_of(r.id);
  for (const IndexRow& r : rows) put_u32(out, r.crc);
  std::vector<std::uint64_t> large;
  for (const IndexRow& r : rows) {
    if (r.offset < 0x80000000u) {
      put_u32(out, static_cast<std::uint32_t>(r.offset));
    } else {
      put_u32(out, 0x80000000u | static_cast<std::uint32_t>(large.size()));
      large.push_back(r.offset);
    }
  }
  for (std::uint64_t offset : large) put_u64(out, offset);
  out += bytes_of(pack_sum);
  out += bytes_of(sha1(out));
  return out;
}

// Written under a temporary name of its own in the same directory, then renamed into place:
// two plans writing one pack never share (and truncate) one temporary file, and a killed one
// leaves no empty pack beside a valid index. The name starts with `tmp_` as git's own temporary
// pack files do, which `git prune` removes should a crash leave one behind. Read-only, as git
// makes its packs.
void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::string error;
  if (!write_file_atomic(path.string(), bytes, 0444, error, "tmp_"))
    throw std::runtime_error(error);
}

}  // namespace

PackFiles build_pack(std::vector<PackObject> objects) {
  std::sort(objects.begin(), objects.end(),
            [](const PackObject& a, const PackObject& b) { return a.id < b.id; });
  objects.erase(std::unique(objects.begin(), objects.end(),
                            [](const PackObject& a, const PackObject& b) { return a.id == b.id; }),
                objects.end());
  std::vector<std::string> entries(objects.size());
  parallel_for(objects.size(), [&](std::size_t i) { entries[i] = pack_entry(objects[i]); });

  PackFiles files;
  files.pack = "PACK";
  put_u32(files.pack, 2);
  put_u32(files.pack, static_cast<std::uint32_t>(objects.size()));
  std::vector<IndexRow> rows(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    rows[i].id = objects[i].id;
    rows[i].offset = files.pack.size();
    rows[i].crc =
        static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(entries[i].data()),
                                         static_cast<uInt>(entries[i].size())));
    files.pack += entries[i];
  }
  std::array<unsigned char, 20> sum = sha1(files.pack);
  files.pack += bytes_of(sum);
  files.index = build_index(std::move(rows), sum);
  files.checksum =
      hex_text(std::string_view(reinterpret_cast<const char*>(sum.data()), sum.size()));
  return files;
}

void write_pack_files(const std::string& pack_dir, const PackFiles& files) {
  std::filesystem::path base = std::filesystem::path(pack_dir) / ("pack-" + files.checksum);
  std::filesystem::create_directories(pack_dir);
  write_file(base.string() + ".pack", files.pack);
  write_file(base.string() + ".idx", files.index);
}

}  // namespace mlenv::plan
