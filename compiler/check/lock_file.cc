#include "compiler/check/lock_file.h"

#include <algorithm>
#include <stdexcept>

#include "compiler/base/git_source.h"
#include "compiler/base/sha256.h"
#include "compiler/diag/render.h"
#include "runtime/json.h"

namespace mlenv::check {
namespace {

// A lock is data of one shape, read as JSON by a reader with no aliases and a bounded depth:
// read as YAML, a 0.5 MB lock of aliases took 1.9 GiB and 67 s, on every command and on
// every keystroke in the language server (issue 32).

bool is_hex(const std::string& text, std::size_t size) {
  return text.size() == size && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string text_of(const boot::Json& object, const char* key) {
  const boot::Json* value = object.find(key);
  if (value == nullptr || !value->is_string())
    throw std::runtime_error(std::string("missing string `") + key + "`");
  return value->as_string();
}

const boot::Json::Array& list_of(const boot::Json& object, const char* key) {
  const boot::Json* value = object.find(key);
  if (value == nullptr || !value->is_array())
    throw std::runtime_error(std::string("missing list `") + key + "`");
  return value->as_array();
}

LockedSource source_of(const boot::Json& item) {
  if (!item.is_object()) throw std::runtime_error("a source is not a JSON object");
  LockedSource source;
  source.url = text_of(item, "url");
  source.ref = text_of(item, "ref");
  source.commit = text_of(item, "commit");
  source.sha256 = text_of(item, "sha256");
  std::string error;
  auto parsed = parse_git_source("git::" + source.url + "//x?ref=" + source.ref, error);
  if (!parsed || parsed->url != source.url) throw std::runtime_error(error);
  if (!is_hex(source.commit, 40)) throw std::runtime_error("`commit` is not 40 hex digits");
  if (!is_hex(source.sha256, 64)) throw std::runtime_error("`sha256` is not 64 hex digits");
  for (const boot::Json& file : list_of(item, "files")) {
    if (!file.is_string()) throw std::runtime_error("a file is not a string");
    auto inside = path_inside_repository(file.as_string());
    if (!inside || *inside != file.as_string())
      throw std::runtime_error("the file `" + file.as_string() +
                               "` is not a path inside the repository");
    source.files.push_back(file.as_string());
  }
  std::sort(source.files.begin(), source.files.end());
  return source;
}

}  // namespace

const LockedSource* LockFile::find(const std::string& url, const std::string& ref) const {
  for (const LockedSource& source : sources) {
    if (source.url == url && source.ref == ref) return &source;
  }
  return nullptr;
}

std::optional<LockFile> parse_lock_file(std::string_view text, std::string& error) {
  try {
    if (text.size() > kMaxLockFileBytes) {
      throw std::runtime_error("larger than the limit of " + std::to_string(kMaxLockFileBytes) +
                               " bytes");
    }
    boot::JsonParseResult json = boot::parse_json(text);
    if (!json.value) {
      throw std::runtime_error("not JSON: " + json.error + " at byte " +
                               std::to_string(json.offset));
    }
    const boot::Json& root = *json.value;
    if (!root.is_object()) throw std::runtime_error("not a JSON object");
    const boot::Json* version = root.find("format_version");
    if (version == nullptr || !version->is_integer() || version->as_int() != 1)
      throw std::runtime_error("`format_version` is not 1");
    LockFile lock;
    for (const boot::Json& item : list_of(root, "sources")) lock.sources.push_back(source_of(item));
    return lock;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string write_lock_file(const LockFile& lock) {
  std::vector<const LockedSource*> sorted;
  for (const LockedSource& source : lock.sources) sorted.push_back(&source);
  std::sort(sorted.begin(), sorted.end(), [](const LockedSource* a, const LockedSource* b) {
    return std::tie(a->url, a->ref) < std::tie(b->url, b->ref);
  });
  std::string out = "{\n  \"format_version\": 1,\n  \"sources\": [";
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const LockedSource& s = *sorted[i];
    out += i == 0 ? "\n" : ",\n";
    out += "    {\"url\": \"" + json_escape(s.url) + "\", \"ref\": \"" + json_escape(s.ref) +
           "\",\n     \"commit\": \"" + s.commit + "\",\n     \"sha256\": \"" + s.sha256 +
           "\",\n     \"files\": [";
    std::vector<std::string> files = s.files;
    std::sort(files.begin(), files.end());
    for (std::size_t f = 0; f < files.size(); ++f)
      out += (f == 0 ? "\"" : ", \"") + json_escape(files[f]) + "\"";
    out += "]}";
  }
  out += sorted.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string files_sha256(const std::map<std::string, std::string>& files) {
  std::string framed;
  for (const auto& [path, bytes] : files) {
    framed += path;
    framed += '\0';
    framed += std::to_string(bytes.size());
    framed += '\0';
    framed += bytes;
  }
  return sha256_hex(framed);
}

std::string cache_folder(const std::string& url, const std::string& commit) {
  return std::string(kCacheFolder) + "/git/" + sha256_hex(url).substr(0, 16) + "/" + commit;
}

}  // namespace mlenv::check
