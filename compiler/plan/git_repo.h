#pragma once
// The only place that talks to libgit2. Plan commits are built in memory from HEAD's tree with
// only the plan directory replaced, and refs move by compare-and-swap, never by force.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/plan/blob_id.h"
#include "compiler/plan/plan_tree.h"

struct git_repository;
struct git_odb_backend;
struct git_oid;
struct git_packbuilder;

namespace mlenv::plan {

/// Any git object id (blob, tree or commit).
using ObjectId = BlobId;

/// A libgit2 failure, with libgit2's message and error code.
class GitError : public std::runtime_error {
 public:
  GitError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Where HEAD points: a branch (possibly unborn: no commit yet) or a detached commit.
struct Head {
  std::string branch;              ///< `refs/heads/main`; "" when detached
  std::optional<ObjectId> commit;  ///< unset on an unborn branch
};

/// One change to a tree: a blob at `path`, or its removal when `blob` is unset.
struct TreeUpdate {
  std::string path;
  std::optional<ObjectId> blob;
};

/// An open repository with a work tree.
class Repository {
 public:
  /// The repository whose work tree contains `path` (which need not exist yet), or nullptr;
  /// then `why`, when given, holds libgit2's reason if a repository was found but could not be
  /// opened (a SHA-256 repository, an unknown extension), "" when there is none.
  static std::unique_ptr<Repository> discover(const std::string& path, std::string* why = nullptr);
  ~Repository();
  Repository(const Repository&) = delete;
  Repository& operator=(const Repository&) = delete;

  /// The work tree's absolute path, ending with `/`; "" for a bare repository.
  std::string workdir() const;
  /// The git directory (`.git/`, or where a `.git` file points), ending with `/`.
  std::string git_dir() const;
  /// Whether git ignores `path` (relative to the work tree): `.gitignore` rules, as `git status`.
  bool ignored(const std::string& path) const;
  Head head() const;
  /// The commit a ref points at, or nullopt if there is no such ref.
  std::optional<ObjectId> ref_target(const std::string& name) const;
  /// Names of the refs matching a glob (`refs/mlenv/applied/*`), sorted.
  std::vector<std::string> refs_matching(const std::string& glob) const;
  /// The tree of a commit.
  ObjectId commit_tree(const ObjectId& commit) const;
  /// The message of a commit.
  std::string commit_message(const ObjectId& commit) const;
  /// The first parent of a commit, or nullopt for a root commit.
  std::optional<ObjectId> first_parent(const ObjectId& commit) const;
  /// The tree at `path` inside `tree` ("" is `tree` itself), or nullopt if absent.
  std::optional<ObjectId> subtree(const ObjectId& tree, const std::string& path) const;
  /// The blob at `path` inside `tree`, or nullopt if there is none.
  std::optional<ObjectId> blob_at(const ObjectId& tree, const std::string& path) const;
  /// Adds every blob under `tree` to `out`, by id only, with paths prefixed by `prefix`.
  void list_tree(const ObjectId& tree, const std::string& prefix, PlanTree& out) const;
  /// A plan tree of the blobs under `tree`, reading bytes from this repository on demand.
  PlanTree plan_tree(const std::optional<ObjectId>& tree, const std::string& prefix = {}) const;
  std::string read_blob(const ObjectId& blob) const;
  ObjectId write_blob(std::string_view bytes);
  /// A second handle on this repository whose object writes stay in memory until
  /// write_pack(): a plan of a 1,000-env fleet writes its blobs and trees as one pack rather
  /// than a loose file each. Reads see the repository's objects and the new ones. Write no
  /// commit through it: libgit2 packs a commit with every object of its tree.
  std::unique_ptr<Repository> in_memory() const;
  /// Writes every object written through this in-memory handle into the repository as one
  /// pack (with its index), so refs may then name them.
  void write_pack();
  /// Makes objects another handle wrote (a pack) visible to this one.
  void refresh_objects();
  /// A new tree: `base` (empty when unset) with `updates` applied; empty directories vanish.
  ObjectId update_tree(const std::optional<ObjectId>& base, std::vector<TreeUpdate> updates);
  /// Writes a commit object without moving any ref.
  ObjectId create_commit(const ObjectId& tree, const std::vector<ObjectId>& parents,
                         const std::string& message);
  /// Moves ref `name` to `target` if it still points at `expected` (or, when `expected` is
  /// unset, does not exist). Returns false when the ref moved meanwhile.
  bool update_ref(const std::string& name, const ObjectId& target,
                  const std::optional<ObjectId>& expected, const std::string& log_message);
  /// Makes the index entries of `paths` (relative to the work tree) match the work tree:
  /// a file that exists gets an entry with its blob id (given in `ids` when already known,
  /// else hashed) and its stat data; a missing file loses its entry. Other entries stay as the
  /// user left them.
  void update_index(const std::vector<std::string>& paths,
                    const std::vector<std::optional<ObjectId>>& ids = {});
  /// The index entries under directory `prefix` (relative to the work tree): path → blob id.
  std::map<std::string, ObjectId> index_entries(const std::string& prefix) const;
  /// The paths under `prefix` whose index entry holds `ids`' blob (path → id, relative to the
  /// work tree) and whose file still has the entry's size, modification time and inode, as git
  /// decides a file is unchanged without reading it.
  std::set<std::string> unchanged_files(const std::string& prefix,
                                        const std::map<std::string, ObjectId>& ids) const;

 private:
  explicit Repository(git_repository* repo) : repo_(repo) {}
  git_repository* repo_;
  /// Packs the trees under `tree` that the in-memory store holds, and their new subtrees.
  void collect_new_trees(const ObjectId& tree, std::vector<ObjectId>& out) const;

  git_odb_backend* mempack_ = nullptr;  ///< owned by the repository's object database
  std::vector<ObjectId> new_blobs_;     ///< blobs written to the in-memory store
  std::vector<ObjectId> new_trees_;     ///< root trees written to it
};

/// A bare mirror of a remote repository's branches and tags, for git imports (`mlenvc get`).
/// Objects are only read, never checked out: no filter (Git LFS), hook or submodule runs.
class Mirror {
 public:
  /// Opens the bare repository at `dir` (creating it), drops its refs and fetches every branch
  /// and tag of `url` into it, stopping once more than `max_bytes` were received.
  /// Throws GitError.
  static std::unique_ptr<Mirror> fetch(const std::string& dir, const std::string& url,
                                       std::size_t max_bytes);
  ~Mirror();
  Mirror(const Mirror&) = delete;
  Mirror& operator=(const Mirror&) = delete;

  /// The commit `ref` names (40 hex digits): a full commit id, else a tag (peeled), a branch,
  /// or a commit id of 7 to 39 hex digits; nullopt if none. `is_tag` says whether it was a tag.
  std::optional<std::string> resolve(const std::string& ref, bool& is_tag) const;
  /// Whether `commit` (40 hex digits) is a commit this mirror holds.
  bool has_commit(const std::string& commit) const;
  /// Whether the commit `tip` is `commit` or descends from it (both 40 hex digits): whether a
  /// branch at `tip` reached `commit`.
  bool reaches(const std::string& tip, const std::string& commit) const;
  /// The bytes of the regular file at `path` (normalized, relative) in the tree of `commit`
  /// (40 hex digits);
  /// nullopt with `error` for a missing path, a symbolic link or submodule on the way, a Git
  /// LFS pointer, or a file over `max_bytes`.
  std::optional<std::string> read_file(const std::string& commit, const std::string& path,
                                       std::size_t max_bytes, std::string& error) const;

 private:
  explicit Mirror(git_repository* repo) : repo_(repo) {}
  /// The commit whose id is or starts with `hex` (7 to 40 lowercase hex digits), or nullopt.
  std::optional<std::string> commit_named(const std::string& hex) const;
  /// The size of the object `id` as its header records it, without inflating it.
  std::size_t object_size(const git_oid* id) const;
  git_repository* repo_;
};

}  // namespace mlenv::plan
