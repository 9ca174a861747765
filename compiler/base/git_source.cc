#include "compiler/base/git_source.h"

#include <algorithm>
#include <vector>

namespace mlenv {
namespace {

constexpr std::string_view kPrefix = "git::";
constexpr std::string_view kSyntax = "`git::URL//PATH?ref=REF`";

bool has_control_or_space(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

// What `git check-ref-format` refuses that a user could type, and a leading `-` that a
// command line would read as an option. Commit ids pass: they are hex.
bool valid_ref(std::string_view ref) {
  if (ref.empty() || ref.front() == '-' || ref.front() == '/' || ref.back() == '/' ||
      ref.back() == '.' || has_control_or_space(ref))
    return false;
  if (ref.find("..") != std::string_view::npos || ref.find("@{") != std::string_view::npos ||
      ref.find("//") != std::string_view::npos)
    return false;
  if (ref.size() >= 5 && ref.substr(ref.size() - 5) == ".lock") return false;
  return ref.find_first_of("~^:?*[\\") == std::string_view::npos;
}

// Whether `url`'s authority carries a secret: a password (`user:secret@`), or any user part
// of an http(s) URL (`https://TOKEN@host`, how forges take tokens). A user name of ssh
// (`ssh://git@host`, `git@host:path`) is no secret.
bool carries_credentials(std::string_view url) {
  std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view authority = url.substr(scheme + 3);
  authority = authority.substr(0, authority.find('/'));
  std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return false;
  std::string_view name = url.substr(0, scheme);
  return authority.substr(0, at).find(':') != std::string_view::npos || name == "http" ||
         name == "https";
}

}  // namespace

std::string GitSource::repository() const {
  return std::string(kPrefix) + url + "?ref=" + ref;
}

std::string GitSource::text() const {
  return std::string(kPrefix) + url + "//" + path + "?ref=" + ref;
}

bool is_git_source(std::string_view import) {
  return import.substr(0, kPrefix.size()) == kPrefix;
}

std::optional<std::string> path_inside_repository(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\\') != std::string_view::npos)
    return std::nullopt;
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  if (parts.empty()) return std::nullopt;
  std::string out;
  for (std::string_view part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

std::optional<GitSource> parse_git_source(std::string_view text, std::string& error) {
  if (!is_git_source(text)) {
    error = "a git source starts with `git::`: " + std::string(kSyntax);
    return std::nullopt;
  }
  std::string_view rest = text.substr(kPrefix.size());
  if (has_control_or_space(rest)) {
    error = "a git source has no spaces or control characters";
    return std::nullopt;
  }
  std::size_t query = rest.find('?');
  std::string_view location = rest.substr(0, query);
  // The `//` after the URL's own `scheme://` separates the repository from the file in it.
  std::size_t scheme = location.find("://");
  std::size_t split = location.find("//", scheme == std::string_view::npos ? 0 : scheme + 3);
  if (split == std::string_view::npos || split + 2 >= location.size()) {
    error = "name the file inside the repository after `//`: " + std::string(kSyntax);
    return std::nullopt;
  }
  GitSource source;
  source.url = std::string(location.substr(0, split));
  if (source.url.empty() || source.url.front() == '-') {
    error = "the repository URL is missing: " + std::string(kSyntax);
    return std::nullopt;
  }
  // Never kept: the URL is written to mlenv.lock, plans/_inputs and get's output (issue 32).
  if (carries_credentials(source.url)) {
    error =
        "the repository URL carries credentials (a password or token before `@`), which mlenvc "
        "would write into mlenv.lock and plans; leave them out: git's credential helper "
        "(`git config credential.helper`) or ssh-agent supplies them";
    return std::nullopt;
  }
  // A relative local path would depend on the directory mlenvc runs in.
  if (scheme == std::string_view::npos && source.url.front() != '/' &&
      source.url.find(':') == std::string::npos) {
    error = "a local repository is named by an absolute path or a `file://` URL, not `" +
            source.url + "`";
    return std::nullopt;
  }
  std::string_view file = location.substr(split + 2);
  std::optional<std::string> inside = path_inside_repository(file);
  if (!inside || file.find("..") != std::string_view::npos) {
    error = "the file `" + std::string(file) +
            "` must be a path inside the repository, without `..` or a leading `/`";
    return std::nullopt;
  }
  source.path = *inside;
  if (source.path.size() < 6 || source.path.compare(source.path.size() - 6, 6, ".mlenv") != 0)
    source.path += ".mlenv";
  if (query == std::string_view::npos) {
    error = "pin the repository with `?ref=` a tag, branch or commit: " + std::string(kSyntax);
    return std::nullopt;
  }
  std::string_view parameters = rest.substr(query + 1);
  if (parameters.substr(0, 4) != "ref=" || parameters.find_first_of("&?") != std::string::npos) {
    error =
        "the only parameter of a git source is `ref=`, once, not `" + std::string(parameters) + "`";
    return std::nullopt;
  }
  source.ref = std::string(parameters.substr(4));
  if (!valid_ref(source.ref)) {
    error = "`" + source.ref + "` is not a git ref name (a tag, branch or commit id)";
    return std::nullopt;
  }
  return source;
}

}  // namespace mlenv
