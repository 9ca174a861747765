#include "compiler/plan/git_repo.h"

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "compiler/base/parallel.h"
#include "compiler/plan/git_credentials.h"
#include "compiler/plan/pack_file.h"

namespace mlenv::plan {
namespace {

// Initializes libgit2 once per process; it is never shut down, as other threads may use it.
void ensure_init() {
  static const int once = git_libgit2_init();
  (void)once;
}

void check(int code, const char* what) {
  if (code >= 0) return;
  const git_error* error = git_error_last();
  throw GitError(std::string(what) + ": " + (error != nullptr ? error->message : "unknown error"),
                 code);
}

git_oid to_oid(const ObjectId& id) {
  git_oid oid;
  std::memcpy(oid.id, id.data(), id.size());
  return oid;
}

ObjectId from_oid(const git_oid& oid) {
  ObjectId id;
  std::memcpy(id.data(), oid.id, id.size());
  return id;
}

template <typename T, void (*Free)(T*)>
struct Owned {
  T* ptr = nullptr;
  ~Owned() {
    if (ptr != nullptr) Free(ptr);
  }
};

using TreePtr = Owned<git_tree, git_tree_free>;
using CommitPtr = Owned<git_commit, git_commit_free>;
using RefPtr = Owned<git_reference, git_reference_free>;
using BlobPtr = Owned<git_blob, git_blob_free>;
using IndexPtr = Owned<git_index, git_index_free>;
using EntryPtr = Owned<git_tree_entry, git_tree_entry_free>;

struct WalkState {
  std::string prefix;
  PlanTree* out;
};

int walk_blob(const char* root, const git_tree_entry* entry, void* payload) {
  if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) return 0;
  auto* state = static_cast<WalkState*>(payload);
  std::string path = state->prefix;
  path += root;
  path += git_tree_entry_name(entry);
  state->out->add_id(std::move(path), from_oid(*git_tree_entry_id(entry)));
  return 0;
}

}  // namespace

std::unique_ptr<Repository> Repository::discover(const std::string& path, std::string* why) {
  ensure_init();
  std::filesystem::path probe = std::filesystem::absolute(path);
  while (!probe.empty() && !std::filesystem::exists(probe) && probe != probe.root_path()) {
    probe = probe.parent_path();
  }
  // Opened from the work tree side, so a `.git` file (`--separate-git-dir`, CI checkouts) gives
  // the directory holding it as the work tree; opening the git directory it names made the
  // work tree that directory's parent, and plan wrote `plans/` there.
  git_repository* repo = nullptr;
  if (int code = git_repository_open_ext(&repo, probe.c_str(), 0, nullptr); code != 0) {
    const git_error* error = git_error_last();
    if (why && code != GIT_ENOTFOUND && error && error->message) *why = error->message;
    return nullptr;
  }
  return std::unique_ptr<Repository>(new Repository(repo));
}

Repository::~Repository() {
  git_repository_free(repo_);
}

std::string Repository::workdir() const {
  const char* dir = git_repository_workdir(repo_);
  return dir == nullptr ? std::string() : std::string(dir);
}

std::string Repository::git_dir() const {
  return git_repository_path(repo_);
}

bool Repository::ignored(const std::string& path) const {
  int ignored = 0;
  return git_ignore_path_is_ignored(&ignored, repo_, path.c_str()) == 0 && ignored != 0;
}

Head Repository::head() const {
  Head head;
  RefPtr symbolic;
  check(git_reference_lookup(&symbolic.ptr, repo_, "HEAD"), "reading HEAD");
  if (git_reference_type(symbolic.ptr) == GIT_REFERENCE_SYMBOLIC) {
    head.branch = git_reference_symbolic_target(symbolic.ptr);
    head.commit = ref_target(head.branch);
  } else {
    head.commit = from_oid(*git_reference_target(symbolic.ptr));
  }
  return head;
}

std::optional<ObjectId> Repository::ref_target(const std::string& name) const {
  git_oid oid;
  int code = git_reference_name_to_id(&oid, repo_, name.c_str());
  if (code == GIT_ENOTFOUND) return std::nullopt;
  check(code, "reading a ref");
  return from_oid(oid);
}

std::vector<std::string> Repository::refs_matching(const std::string& glob) const {
  std::vector<std::string> names;
  auto collect = [](const char* name, void* payload) {
    static_cast<std::vector<std::string>*>(payload)->emplace_back(name);
    return 0;
  };
  check(git_reference_foreach_glob(repo_, glob.c_str(), collect, &names), "listing refs");
  std::sort(names.begin(), names.end());
  return names;
}

ObjectId Repository::commit_tree(const ObjectId& commit) const {
  CommitPtr object;
  git_oid oid = to_oid(commit);
  check(git_commit_lookup(&object.ptr, repo_, &oid), "reading a commit");
  return from_oid(*git_commit_tree_id(object.ptr));
}

std::string Repository::commit_message(const ObjectId& commit) const {
  CommitPtr object;
  git_oid oid = to_oid(commit);
  check(git_commit_lookup(&object.ptr, repo_, &oid), "reading a commit");
  const char* text = git_commit_message(object.ptr);
  return text == nullptr ? std::string() : std::string(text);
}

std::optional<ObjectId> Repository::first_parent(const ObjectId& commit) const {
  CommitPtr object;
  git_oid oid = to_oid(commit);
  check(git_commit_lookup(&object.ptr, repo_, &oid), "reading a commit");
  if (git_commit_parentcount(object.ptr) == 0) return std::nullopt;
  return from_oid(*git_commit_parent_id(object.ptr, 0));
}

std::optional<ObjectId> Repository::subtree(const ObjectId& tree, const std::string& path) const {
  if (path.empty()) return tree;
  TreePtr root;
  git_oid oid = to_oid(tree);
  check(git_tree_lookup(&root.ptr, repo_, &oid), "reading a tree");
  EntryPtr entry;
  int code = git_tree_entry_bypath(&entry.ptr, root.ptr, path.c_str());
  if (code == GIT_ENOTFOUND) return std::nullopt;
  check(code, "reading a tree entry");
  if (git_tree_entry_type(entry.ptr) != GIT_OBJECT_TREE) return std::nullopt;
  return from_oid(*git_tree_entry_id(entry.ptr));
}

std::optional<ObjectId> Repository::blob_at(const ObjectId& tree, const std::string& path) const {
  TreePtr root;
  git_oid oid = to_oid(tree);
  check(git_tree_lookup(&root.ptr, repo_, &oid), "reading a tree");
  EntryPtr entry;
  int code = git_tree_entry_bypath(&entry.ptr, root.ptr, path.c_str());
  if (code == GIT_ENOTFOUND) return std::nullopt;
  check(code, "reading a tree entry");
  if (git_tree_entry_type(entry.ptr) != GIT_OBJECT_BLOB) return std::nullopt;
  return from_oid(*git_tree_entry_id(entry.ptr));
}

void Repository::list_tree(const ObjectId& tree, const std::string& prefix, PlanTree& out) const {
  TreePtr object;
  git_oid oid = to_oid(tree);
  check(git_tree_lookup(&object.ptr, repo_, &oid), "reading a tree");
  WalkState state{prefix.empty() ? std::string() : prefix + "/", &out};
  check(git_tree_walk(object.ptr, GIT_TREEWALK_PRE, walk_blob, &state), "walking a tree");
}

PlanTree Repository::plan_tree(const std::optional<ObjectId>& tree,
                               const std::string& prefix) const {
  PlanTree out([this](const BlobId& id) { return read_blob(id); });
  if (tree) list_tree(*tree, prefix, out);
  return out;
}

std::string Repository::read_blob(const ObjectId& blob) const {
  BlobPtr object;
  git_oid oid = to_oid(blob);
  check(git_blob_lookup(&object.ptr, repo_, &oid), "reading a blob");
  return std::string(static_cast<const char*>(git_blob_rawcontent(object.ptr)),
                     static_cast<std::size_t>(git_blob_rawsize(object.ptr)));
}

ObjectId Repository::write_blob(std::string_view bytes) {
  git_oid oid;
  check(git_blob_create_from_buffer(&oid, repo_, bytes.data(), bytes.size()), "writing a blob");
  if (mempack_ != nullptr) new_blobs_.push_back(from_oid(oid));
  return from_oid(oid);
}

std::unique_ptr<Repository> Repository::in_memory() const {
  git_repository* repo = nullptr;
  check(git_repository_open(&repo, git_repository_path(repo_)), "opening the repository");
  std::unique_ptr<Repository> out(new Repository(repo));
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo), "opening the object database");
  git_odb_backend* mempack = nullptr;
  int code = git_mempack_new(&mempack);
  // Above every other backend, so that writes land in memory; reads still reach the rest.
  if (code == 0) code = git_odb_add_backend(odb, mempack, 1000);
  git_odb_free(odb);
  check(code, "creating an in-memory object store");
  out->mempack_ = mempack;
  return out;
}

void Repository::collect_new_trees(const ObjectId& tree, std::vector<ObjectId>& out) const {
  git_oid oid = to_oid(tree);
  if (mempack_->exists(mempack_, &oid) == 0) return;  // on disk already, with all it holds
  out.push_back(tree);
  TreePtr object;
  check(git_tree_lookup(&object.ptr, repo_, &oid), "reading a tree");
  for (std::size_t i = 0; i < git_tree_entrycount(object.ptr); ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(object.ptr, i);
    if (git_tree_entry_type(entry) == GIT_OBJECT_TREE)
      collect_new_trees(from_oid(*git_tree_entry_id(entry)), out);
  }
}

// git_mempack_dump packs only commits, each with every object of its tree; the plan packs
// exactly the blobs and trees it wrote (pack_file.h: whole, without libgit2's delta search).
void Repository::write_pack() {
  std::vector<ObjectId> trees;
  for (const ObjectId& tree : new_trees_) collect_new_trees(tree, trees);
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo_), "opening the object database");
  std::vector<git_odb_object*> read;
  std::vector<PackObject> objects;
  int code = 0;
  auto add = [&](const ObjectId& id, PackObject::Type type) {
    git_oid oid = to_oid(id);
    git_odb_object* object = nullptr;
    if (code == 0) code = git_odb_read(&object, odb, &oid);
    if (code != 0) return;
    read.push_back(object);
    objects.push_back(
        {id,
         type,
         {static_cast<const char*>(git_odb_object_data(object)), git_odb_object_size(object)}});
  };
  for (const ObjectId& blob : new_blobs_) add(blob, PackObject::Type::Blob);
  for (const ObjectId& tree : trees) add(tree, PackObject::Type::Tree);
  std::string error;
  if (code == 0 && !objects.empty()) {  // nothing new, no pack
    try {
      // The objects of a linked work tree (`git worktree add`) live in the common directory.
      write_pack_files(std::string(git_repository_commondir(repo_)) + "objects/pack",
                       build_pack(std::move(objects)));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  for (git_odb_object* object : read) git_odb_object_free(object);
  git_odb_free(odb);
  check(code, "reading a new object");
  if (!error.empty()) throw GitError("writing the pack: " + error, -1);
  new_blobs_.clear();
  new_trees_.clear();
  check(git_mempack_reset(mempack_), "clearing the in-memory object store");
}

void Repository::refresh_objects() {
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, repo_), "opening the object database");
  int code = git_odb_refresh(odb);
  git_odb_free(odb);
  check(code, "reading the new pack");
}

ObjectId Repository::update_tree(const std::optional<ObjectId>& base,
                                 std::vector<TreeUpdate> updates) {
  git_oid base_oid;
  if (base) {
    base_oid = to_oid(*base);
  } else {
    git_treebuilder* builder = nullptr;
    check(git_treebuilder_new(&builder, repo_, nullptr), "creating a tree");
    int code = git_treebuilder_write(&base_oid, builder);
    git_treebuilder_free(builder);
    check(code, "writing an empty tree");
  }
  TreePtr baseline;
  check(git_tree_lookup(&baseline.ptr, repo_, &base_oid), "reading a tree");
  // git_tree_create_updated walks directories as a stack, so updates under one directory must
  // be adjacent: byte order of full paths guarantees it.
  std::sort(updates.begin(), updates.end(),
            [](const TreeUpdate& a, const TreeUpdate& b) { return a.path < b.path; });
  std::vector<git_tree_update> raw(updates.size());
  for (std::size_t i = 0; i < updates.size(); ++i) {
    raw[i].action = updates[i].blob ? GIT_TREE_UPDATE_UPSERT : GIT_TREE_UPDATE_REMOVE;
    if (updates[i].blob) raw[i].id = to_oid(*updates[i].blob);
    raw[i].filemode = GIT_FILEMODE_BLOB;
    raw[i].path = updates[i].path.c_str();
  }
  git_oid out;
  check(git_tree_create_updated(&out, repo_, baseline.ptr, raw.size(), raw.data()),
        "building the plan tree");
  if (mempack_ != nullptr) new_trees_.push_back(from_oid(out));
  return from_oid(out);
}

ObjectId Repository::create_commit(const ObjectId& tree, const std::vector<ObjectId>& parents,
                                   const std::string& message) {
  git_signature* signature = nullptr;
  if (git_signature_default(&signature, repo_) != 0) {
    check(git_signature_now(&signature, "mlenvc", "mlenvc@localhost"), "creating a signature");
  }
  TreePtr tree_object;
  git_oid tree_oid = to_oid(tree);
  int code = git_tree_lookup(&tree_object.ptr, repo_, &tree_oid);
  std::vector<CommitPtr> parent_objects(parents.size());
  std::vector<const git_commit*> parent_ptrs;
  for (std::size_t i = 0; code == 0 && i < parents.size(); ++i) {
    git_oid oid = to_oid(parents[i]);
    code = git_commit_lookup(&parent_objects[i].ptr, repo_, &oid);
    parent_ptrs.push_back(parent_objects[i].ptr);
  }
  git_oid out;
  if (code == 0) {
    code = git_commit_create(&out, repo_, nullptr, signature, signature, "UTF-8", message.c_str(),
                             tree_object.ptr, parent_ptrs.size(), parent_ptrs.data());
  }
  git_signature_free(signature);
  check(code, "writing the commit");
  return from_oid(out);
}

bool Repository::update_ref(const std::string& name, const ObjectId& target,
                            const std::optional<ObjectId>& expected,
                            const std::string& log_message) {
  git_oid new_oid = to_oid(target);
  RefPtr ref;
  int code;
  if (expected) {
    git_oid old_oid = to_oid(*expected);
    code = git_reference_create_matching(&ref.ptr, repo_, name.c_str(), &new_oid, 1, &old_oid,
                                         log_message.c_str());
  } else {
    // force = 0 with no expected value: the ref must not exist yet (an unborn branch).
    code = git_reference_create_matching(&ref.ptr, repo_, name.c_str(), &new_oid, 0, nullptr,
                                         log_message.c_str());
  }
  if (code == GIT_EMODIFIED || code == GIT_EEXISTS) return false;
  check(code, "moving the ref");
  return true;
}

void Repository::update_index(const std::vector<std::string>& paths,
                              const std::vector<std::optional<ObjectId>>& ids) {
  IndexPtr index;
  check(git_repository_index(&index.ptr, repo_), "opening the index");
  check(git_index_read(index.ptr, 0), "reading the index");
  const std::string root = workdir();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    struct stat info;
    if (::stat((root + path).c_str(), &info) != 0) {
      int code = git_index_remove_bypath(index.ptr, path.c_str());
      if (code != GIT_ENOTFOUND) check(code, "updating the index");
      continue;
    }
    if (i >= ids.size() || !ids[i]) {
      check(git_index_add_bypath(index.ptr, path.c_str()), "updating the index");
      continue;
    }
    // The blob is known and the file was just written from it: record its stat data as git
    // does, without reading it back.
    git_index_entry entry;
    std::memset(&entry, 0, sizeof entry);
    entry.ctime.seconds = static_cast<int32_t>(info.st_ctim.tv_sec);
    entry.ctime.nanoseconds = static_cast<uint32_t>(info.st_ctim.tv_nsec);
    entry.mtime.seconds = static_cast<int32_t>(info.st_mtim.tv_sec);
    entry.mtime.nanoseconds = static_cast<uint32_t>(info.st_mtim.tv_nsec);
    entry.dev = static_cast<uint32_t>(info.st_dev);
    entry.ino = static_cast<uint32_t>(info.st_ino);
    entry.mode = GIT_FILEMODE_BLOB;
    entry.uid = info.st_uid;
    entry.gid = info.st_gid;
    entry.file_size = static_cast<uint32_t>(info.st_size);
    entry.id = to_oid(*ids[i]);
    entry.path = path.c_str();
    check(git_index_add(index.ptr, &entry), "updating the index");
  }
  check(git_index_write(index.ptr), "writing the index");
}

std::map<std::string, ObjectId> Repository::index_entries(const std::string& prefix) const {
  IndexPtr index;
  check(git_repository_index(&index.ptr, repo_), "opening the index");
  check(git_index_read(index.ptr, 0), "reading the index");
  std::map<std::string, ObjectId> out;
  const std::string dir = prefix + "/";
  for (std::size_t i = 0; i < git_index_entrycount(index.ptr); ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.ptr, i);
    std::string_view path(entry->path);
    if (path.starts_with(dir)) out.emplace_hint(out.end(), path, from_oid(entry->id));
  }
  return out;
}

}  // namespace mlenv::plan

namespace mlenv::plan {

std::set<std::string> Repository::unchanged_files(
    const std::string& prefix, const std::map<std::string, ObjectId>& ids) const {
  IndexPtr index;
  check(git_repository_index(&index.ptr, repo_), "opening the index");
  check(git_index_read(index.ptr, 0), "reading the index");
  const std::string root = workdir();
  const std::string dir = prefix + "/";
  std::vector<const git_index_entry*> candidates;
  for (std::size_t i = 0; i < git_index_entrycount(index.ptr); ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.ptr, i);
    std::string_view path(entry->path);
    if (!path.starts_with(dir)) continue;
    auto id = ids.find(std::string(path));
    if (id != ids.end() && from_oid(entry->id) == id->second) candidates.push_back(entry);
  }
  // One lstat a file, tens of thousands for a fleet: on every core.
  std::vector<char> same(candidates.size(), 0);
  parallel_for(candidates.size(), [&](std::size_t i) {
    const git_index_entry* entry = candidates[i];
    struct stat info;
    if (::lstat((root + entry->path).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return;
    // Nanosecond modification times and the inode: a file rewritten since the index entry was
    // recorded differs in one of them (or in size) unless written within the same nanosecond.
    same[i] = static_cast<uint32_t>(info.st_size) == entry->file_size &&
              static_cast<int32_t>(info.st_mtim.tv_sec) == entry->mtime.seconds &&
              static_cast<uint32_t>(info.st_mtim.tv_nsec) == entry->mtime.nanoseconds &&
              static_cast<uint32_t>(info.st_ino) == entry->ino;
  });
  std::set<std::string> out;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (same[i]) out.emplace_hint(out.end(), candidates[i]->path);
  }
  return out;
}

namespace {

// Cancels a fetch once it received more than the limit (libgit2 stops on a non-zero return).
// What the callbacks of one fetch share.
struct FetchState {
  std::size_t max_bytes;
  CredentialState credentials;
};

int within_limit(const git_indexer_progress* stats, void* payload) {
  return stats->received_bytes > static_cast<const FetchState*>(payload)->max_bytes ? -1 : 0;
}

int credentials(git_credential** out, const char* url, const char* username_from_url,
                unsigned int allowed_types, void* payload) {
  return acquire_credentials(out, url, username_from_url, allowed_types,
                             &static_cast<FetchState*>(payload)->credentials);
}

int collect_ref(git_reference* ref, void* payload) {
  static_cast<std::vector<std::string>*>(payload)->push_back(git_reference_name(ref));
  git_reference_free(ref);
  return 0;
}

// Makes `repo` read only the user's configuration (global, XDG, system), never the config
// file in its own folder: a mirror a repository shipped carried `url.<x>.insteadOf` and
// redirected the fetch (issue 32); libgit2 applies insteadOf from the repository's config
// when it creates the remote (remote.c, git_remote_create_with_opts).
void ignore_own_config(git_repository* repo) {
  Owned<git_config, git_config_free> user;
  check(git_config_open_default(&user.ptr), "reading the user's git configuration");
  check(git_repository_set_config(repo, user.ptr), "isolating the mirror's configuration");
}

}  // namespace

std::unique_ptr<Mirror> Mirror::fetch(const std::string& dir, const std::string& url,
                                      std::size_t max_bytes) {
  ensure_init();
  git_repository* repo = nullptr;
  if (git_repository_open_bare(&repo, dir.c_str()) != 0)
    check(git_repository_init(&repo, dir.c_str(), 1), "creating the mirror");
  std::unique_ptr<Mirror> mirror(new Mirror(repo));
  ignore_own_config(repo);
  // Refs the remote no longer has must not resolve: each fetch starts from none.
  std::vector<std::string> names;
  check(git_reference_foreach(repo, collect_ref, &names), "listing the mirror's refs");
  for (const std::string& name : names) git_reference_remove(repo, name.c_str());
  Owned<git_remote, git_remote_free> remote;
  check(git_remote_create_anonymous(&remote.ptr, repo, url.c_str()), "naming the remote");
  git_fetch_options options;
  // The function, not GIT_FETCH_OPTIONS_INIT, whose partial braces clang warns about.
  check(git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION), "initialising the fetch");
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;  // the refspecs name every tag
  FetchState state{max_bytes, {}};
  options.callbacks.transfer_progress = within_limit;
  options.callbacks.credentials = credentials;
  options.callbacks.payload = &state;
  const char* specs[] = {"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"};
  git_strarray refspecs = {const_cast<char**>(specs), 2};
  check(git_remote_fetch(remote.ptr, &refspecs, &options, nullptr), "fetching");
  return mirror;
}

Mirror::~Mirror() {
  git_repository_free(repo_);
}

std::optional<std::string> Mirror::resolve(const std::string& ref, bool& is_tag) const {
  is_tag = false;
  // Full commit ids before refs, as git reads them (object-name.c, get_oid_basic: "a ref that
  // ends with 40 hex characters ... will be ignored when you just specify 40-hex"): a branch
  // or tag named like the pinned commit must not take the pin over.
  if (ref.size() == GIT_OID_HEXSZ) return commit_named(ref);
  for (const char* prefix : {"refs/tags/", "refs/heads/"}) {
    RefPtr found;
    if (git_reference_lookup(&found.ptr, repo_, (prefix + ref).c_str()) != 0) continue;
    Owned<git_object, git_object_free> commit;
    if (git_reference_peel(&commit.ptr, found.ptr, GIT_OBJECT_COMMIT) != 0) continue;
    is_tag = std::string_view(prefix) == "refs/tags/";
    return to_hex(from_oid(*git_object_id(commit.ptr)));
  }
  is_tag = false;
  return commit_named(ref);
}

std::optional<std::string> Mirror::commit_named(const std::string& ref) const {
  if (ref.size() < 7 || ref.size() > GIT_OID_HEXSZ ||
      ref.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  git_oid prefix;
  if (git_oid_fromstrn(&prefix, ref.c_str(), ref.size()) != 0) return std::nullopt;
  Owned<git_object, git_object_free> commit;
  if (git_object_lookup_prefix(&commit.ptr, repo_, &prefix, ref.size(), GIT_OBJECT_COMMIT) != 0)
    return std::nullopt;
  return to_hex(from_oid(*git_object_id(commit.ptr)));
}

bool Mirror::has_commit(const std::string& commit) const {
  CommitPtr found;
  git_oid oid;
  return git_oid_fromstr(&oid, commit.c_str()) == 0 &&
         git_commit_lookup(&found.ptr, repo_, &oid) == 0;
}

bool Mirror::reaches(const std::string& tip, const std::string& commit) const {
  if (tip == commit) return true;
  git_oid from, to;
  return git_oid_fromstr(&from, tip.c_str()) == 0 && git_oid_fromstr(&to, commit.c_str()) == 0 &&
         git_graph_descendant_of(repo_, &from, &to) == 1;
}

std::size_t Mirror::object_size(const git_oid* id) const {
  Owned<git_odb, git_odb_free> odb;
  check(git_repository_odb(&odb.ptr, repo_), "opening the object database");
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  check(git_odb_read_header(&size, &type, odb.ptr, id), "reading a file's size");
  return size;
}

std::optional<std::string> Mirror::read_file(const std::string& commit, const std::string& path,
                                             std::size_t max_bytes, std::string& error) const {
  CommitPtr found;
  git_oid oid;
  check(git_oid_fromstr(&oid, commit.c_str()), "reading a commit id");
  check(git_commit_lookup(&found.ptr, repo_, &oid), "reading the commit");
  TreePtr tree;
  check(git_commit_tree(&tree.ptr, found.ptr), "reading the commit's tree");
  // One component at a time, so that a link or submodule on the way is named, never followed.
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    std::string name = path.substr(start, slash == std::string::npos ? slash : slash - start);
    std::string so_far = path.substr(0, slash);
    const git_tree_entry* entry = git_tree_entry_byname(tree.ptr, name.c_str());
    if (entry == nullptr) {
      error = "the commit has no `" + so_far + "`";
      return std::nullopt;
    }
    git_filemode_t mode = git_tree_entry_filemode(entry);
    if (mode == GIT_FILEMODE_LINK) {
      error = "`" + so_far + "` is a symbolic link, which a git import never follows";
      return std::nullopt;
    }
    if (mode == GIT_FILEMODE_COMMIT) {
      error = "`" + so_far + "` is a submodule, which a git import never follows";
      return std::nullopt;
    }
    if (slash == std::string::npos) {
      if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE) {
        error = "`" + so_far + "` is not a file";
        return std::nullopt;
      }
      // The size from the object's header, before it is inflated: a 0.7 MiB repository with a
      // highly compressible blob drove get to 526 MiB when the limit was checked after (#32).
      if (std::size_t size = object_size(git_tree_entry_id(entry)); size > max_bytes) {
        error =
            "`" + so_far + "` is larger than the limit of " + std::to_string(max_bytes) + " bytes";
        return std::nullopt;
      }
      BlobPtr blob;
      check(git_blob_lookup(&blob.ptr, repo_, git_tree_entry_id(entry)), "reading a file");
      auto size = static_cast<std::size_t>(git_blob_rawsize(blob.ptr));
      if (size > max_bytes) {
        error =
            "`" + so_far + "` is larger than the limit of " + std::to_string(max_bytes) + " bytes";
        return std::nullopt;
      }
      std::string bytes(static_cast<const char*>(git_blob_rawcontent(blob.ptr)), size);
      if (bytes.starts_with("version https://git-lfs.github.com/spec/")) {
        error = "`" + so_far + "` is a Git LFS pointer; LFS content is never fetched";
        return std::nullopt;
      }
      return bytes;
    }
    if (mode != GIT_FILEMODE_TREE) {
      error = "`" + so_far + "` is not a folder";
      return std::nullopt;
    }
    TreePtr next;
    check(git_tree_lookup(&next.ptr, repo_, git_tree_entry_id(entry)), "reading a folder");
    std::swap(tree.ptr, next.ptr);
    start = slash + 1;
  }
}

}  // namespace mlenv::plan
