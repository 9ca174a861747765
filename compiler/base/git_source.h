#pragma once
// The one reader of a git import's source, in Terraform's syntax: `git::URL//PATH?ref=REF`
// names the file PATH of the repository at URL, at a tag, branch or commit.

#include <optional>
#include <string>
#include <string_view>

namespace mlenv {

/// A file of a git repository at a ref, as an import names it.
struct GitSource {
  std::string url;   ///< as libgit2 takes it: `file:///srv/p.git`, `https://...`, `/srv/p.git`
  std::string path;  ///< the file inside the repository: normalized, relative, ending `.mlenv`
  std::string ref;   ///< a tag, a branch or a commit id

  /// `git::URL?ref=REF`: the repository at a ref, what mlenv.lock and the cache key by.
  std::string repository() const;
  /// `git::URL//PATH?ref=REF`, the canonical spelling (also the loader's key of the file).
  std::string text() const;
};

/// Whether an import path names a git source: it starts with `git::`.
bool is_git_source(std::string_view import);

/// Parses `git::URL//PATH?ref=REF` (`.mlenv` is added to PATH when missing); nullopt with
/// `error` saying what is wrong. PATH may not leave the repository (`..`, a leading `/`).
std::optional<GitSource> parse_git_source(std::string_view text, std::string& error);

/// `path` (relative, `/`-separated) normalized inside a repository root; nullopt when it is
/// absolute, empty or climbs out of the root with `..`.
std::optional<std::string> path_inside_repository(std::string_view path);

}  // namespace mlenv
