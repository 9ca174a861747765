// Git imports in memory: the one parser of `git::URL//PATH?ref=REF`, mlenv.lock, and the
// loader reading a git import only from the cache the lock pins (the fetching side is
// tests/imports/git_imports_test.sh, with real repositories).

#include <catch2/catch.hpp>

#include "compiler/base/file_system.h"
#include "compiler/base/git_source.h"
#include "compiler/check/check.h"
#include "compiler/check/git_imports.h"
#include "compiler/check/lock_file.h"
#include "targets/provider.h"

namespace mlenv {
namespace {

std::optional<GitSource> parse(const std::string& text) {
  std::string error;
  return parse_git_source(text, error);
}

TEST_CASE("git sources: Terraform's syntax, file after //, ref required") {
  auto s = parse("git::https://git.example.org/platform/profiles.git//site/barcelona?ref=v1");
  REQUIRE(s);
  CHECK(s->url == "https://git.example.org/platform/profiles.git");
  CHECK(s->path == "site/barcelona.mlenv");
  CHECK(s->ref == "v1");
  CHECK(s->repository() == "git::https://git.example.org/platform/profiles.git?ref=v1");
  CHECK(s->text() ==
        "git::https://git.example.org/platform/profiles.git//site/barcelona.mlenv?ref=v1");
  auto local = parse("git::file:///srv/p.git//a/./b.mlenv?ref=0123abc");
  REQUIRE(local);
  CHECK(local->url == "file:///srv/p.git");
  CHECK(local->path == "a/b.mlenv");
  auto scp = parse("git::git@example.org:platform/p.git//x?ref=release/2026");
  REQUIRE(scp);
  CHECK(scp->url == "git@example.org:platform/p.git");
  CHECK(scp->ref == "release/2026");
  CHECK(parse("git::/srv/p.git//x?ref=v1")->url == "/srv/p.git");
  // A user name for ssh is no secret: ssh-agent authenticates it.
  CHECK(parse("git::ssh://git@example.org/p.git//x?ref=v1"));
}

TEST_CASE("git sources: malformed ones are refused") {
  for (const char* bad : {
           "file:///srv/p.git//x?ref=v1",            // no git::
           "git::file:///srv/p.git?ref=v1",          // no //PATH
           "git::file:///srv/p.git//x",              // no ref
           "git::file:///srv/p.git//../x?ref=v1",    // leaves the repository
           "git::file:///srv/p.git///etc/x?ref=v1",  // absolute
           "git::relative/p.git//x?ref=v1",          // relative local path
           "git::file:///srv/p.git//x?ref=v1&depth=1",
           "git::file:///srv/p.git//x?ref=a..b",
           "git::file:///srv/p.git//x?ref=-x",
           "git::file:///srv/p.git//x?ref=",
           "git::file:///srv/p git//x?ref=v1",
           // Credentials are never kept in a URL (issue 32): a password, an http(s) token.
           "git::https://user:s3cret@example.org/p.git//x?ref=v1",
           "git::https://ghp_s3cret@example.org/p.git//x?ref=v1",
           "git::ssh://git:s3cret@example.org/p.git//x?ref=v1",
       }) {
    INFO(bad);
    CHECK_FALSE(parse(bad));
  }
}

TEST_CASE("mlenv.lock: written and read back, malformed locks refused") {
  check::LockFile lock;
  lock.sources.push_back({"file:///srv/p.git",
                          "v1",
                          std::string(40, 'a'),
                          std::string(64, 'b'),
                          {"site/b.mlenv", "common/a.mlenv"}});
  std::string text = check::write_lock_file(lock);
  std::string error;
  auto parsed = check::parse_lock_file(text, error);
  REQUIRE(parsed);
  REQUIRE(parsed->sources.size() == 1);
  CHECK(parsed->sources[0].files == std::vector<std::string>{"common/a.mlenv", "site/b.mlenv"});
  CHECK(parsed->find("file:///srv/p.git", "v1") != nullptr);
  CHECK(parsed->find("file:///srv/p.git", "v2") == nullptr);
  CHECK(check::write_lock_file(*parsed) == text);
  std::string short_commit = text;
  short_commit.replace(short_commit.find(std::string(40, 'a')), 40, "abc");
  CHECK_FALSE(check::parse_lock_file(short_commit, error));
  std::string escaping = text;
  escaping.replace(escaping.find("common/a.mlenv"), 14, "../a.mlenv");
  CHECK_FALSE(check::parse_lock_file(escaping, error));
}

// Issue 32: read as YAML, a 0.5 MB lock of nested aliases cost 1.9 GiB and 67 s on every
// command and every keystroke in the language server. A lock is JSON of one shape.
TEST_CASE("mlenv.lock: read as JSON, never YAML: aliases are refused, not expanded") {
  std::string error;
  const std::string aliased =
      "format_version: 1\n"
      "sources:\n"
      "  - {url: &u file:///srv/p.git, ref: v1, commit: " +
      std::string(40, 'a') + ", sha256: " + std::string(64, 'b') +
      ", files: [&f a.mlenv, *f, *f]}\n";
  CHECK_FALSE(check::parse_lock_file(aliased, error));
  CHECK(error.find("not JSON") != std::string::npos);
}

TEST_CASE("mlenv.lock: one larger than the limit is refused before it is parsed") {
  check::LockFile lock;
  std::string text = check::write_lock_file(lock);
  text.insert(1, check::kMaxLockFileBytes, ' ');
  std::string error;
  CHECK_FALSE(check::parse_lock_file(text, error));
  CHECK(error.find("larger than the limit") != std::string::npos);
  text.erase(1, text.size() - check::kMaxLockFileBytes);  // exactly the limit: read
  CHECK(check::parse_lock_file(text, error));
}

TEST_CASE("files_sha256 frames each file: moving bytes between files changes it") {
  CHECK(check::files_sha256({{"a", "xy"}, {"b", ""}}) !=
        check::files_sha256({{"a", "x"}, {"b", "y"}}));
}

// A consumer folder with a lock and a cache, in memory.
struct Folder {
  MemoryFileSystem files;
  std::string commit = std::string(40, 'c');
  std::string url = "file:///srv/p.git";
  std::map<std::string, std::string> cached = {
      {"site/b.mlenv", "import \"../common/a\"\ncluster b extends a.base { api = \"b\" }\n"},
      {"common/a.mlenv", "cluster base {\n  final namespace = \"ns\"\n}\n"}};

  void write(bool with_lock = true) {
    check::LockFile lock;
    lock.sources.push_back({url, "v1", commit, check::files_sha256(cached), {}});
    for (const auto& [path, bytes] : cached) {
      lock.sources[0].files.push_back(path);
      files.add("team/" + check::cache_folder(url, commit) + "/" + path, bytes);
    }
    if (with_lock) files.add("team/mlenv.lock", check::write_lock_file(lock));
  }
  std::optional<ir::Program> check(const std::string& program, Diagnostics& diagnostics) {
    files.add("team/main.mlenv", program);
    SourceManager sources;
    return check::check_program("team/main.mlenv", files, sources, diagnostics,
                                target::check_rules());
  }
};

constexpr const char* kConsumer =
    "import \"git::file:///srv/p.git//site/b?ref=v1\"\ncluster mine extends b.b {}\n";

TEST_CASE("git imports load from the locked cache, relative imports inside the repository") {
  Folder folder;
  folder.write();
  Diagnostics diagnostics;
  auto program = folder.check(kConsumer, diagnostics);
  REQUIRE(program);
  bool found = false;
  for (const ir::InputFile& input : program->inputs) {
    if (input.path == "git::file:///srv/p.git//common/a.mlenv?ref=v1") {
      found = true;
      CHECK(input.commit == folder.commit);
    }
  }
  CHECK(found);
}

TEST_CASE("git imports: final of a published profile binds") {
  Folder folder;
  folder.write();
  Diagnostics diagnostics;
  CHECK_FALSE(
      folder.check("import \"git::file:///srv/p.git//site/b?ref=v1\"\n"
                   "cluster mine extends b.b { namespace = \"other\" }\n",
                   diagnostics));
  REQUIRE(diagnostics.all().size() == 1);
  CHECK(diagnostics.all()[0].code == Code::E0308);
}

TEST_CASE("git imports: no lock, an unlocked ref, a missing or tampered cache") {
  auto first_code = [](Folder& folder, const std::string& program) {
    Diagnostics diagnostics;
    folder.check(program, diagnostics);
    return diagnostics.all().empty() ? Code::E0101 : diagnostics.all()[0].code;
  };
  Folder no_lock;
  no_lock.write(false);
  CHECK(first_code(no_lock, kConsumer) == Code::E0221);
  Folder other_ref;
  other_ref.write();
  CHECK(first_code(other_ref, "import \"git::file:///srv/p.git//site/b?ref=v2\"\n") == Code::E0221);
  CHECK(first_code(other_ref, "import \"git::file:///srv/p.git//site/c?ref=v1\"\n") == Code::E0221);
  Folder tampered;
  tampered.write();
  tampered.files.add(
      "team/" + check::cache_folder(tampered.url, tampered.commit) + "/common/a.mlenv",
      "cluster base {}\n");
  CHECK(first_code(tampered, kConsumer) == Code::E0222);
  Folder escaping;
  escaping.cached["site/b.mlenv"] = "import \"../../outside\"\n";
  escaping.write();
  CHECK(first_code(escaping, kConsumer) == Code::E0223);
}

TEST_CASE("git imports: a git source as the file to compile is refused") {
  for (const char* root : {"git::bad", "git::file:///srv/p.git//site/b?ref=v1"}) {
    MemoryFileSystem files;
    SourceManager sources;
    Diagnostics diagnostics;
    CHECK_FALSE(check::check_program(root, files, sources, diagnostics, target::check_rules()));
    REQUIRE(diagnostics.all().size() == 1);
    CHECK(diagnostics.all()[0].code == Code::E0220);
  }
}

TEST_CASE("MLENV_PATH folders: colon-separated, empty entries skipped") {
  CHECK(check::site_folders("/a::/b:") == std::vector<std::string>{"/a", "/b"});
  CHECK(check::site_folders("").empty());
}

}  // namespace
}  // namespace mlenv
