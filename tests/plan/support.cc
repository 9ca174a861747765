#include "tests/plan/support.h"

#include <git2.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "compiler/base/sha256.h"

namespace mlenv::plan::testing {
namespace fs = std::filesystem;
namespace {

void check(int code, const char* what) {
  if (code < 0) {
    const git_error* e = git_error_last();
    throw std::runtime_error(std::string(what) + ": " + (e ? e->message : "?"));
  }
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Admin objects are cluster-scoped (an SCC, a ClusterRole), except the namespaced Role and
// RoleBinding that grant `use` of an SCC.
bool cluster_scoped(const FakeObject& object) {
  return object.admin && object.kind != "Role" && object.kind != "RoleBinding";
}

std::string object_file(const FakeObject& object) {
  std::string name = lower(object.kind) + "-" + object.name + ".yaml";
  return object.admin ? "../_admin/" + name : name;
}

std::string object_yaml(const FakeEnv& env, const FakeObject& object) {
  std::string out = "apiVersion: " + object.api_version + "\nkind: " + object.kind +
                    "\nmetadata:\n  name: " + object.name + "\n";
  if (!cluster_scoped(object)) out += "  namespace: " + env.namespace_ + "\n";
  return out + object.body;
}

struct Repo {
  git_repository* repo = nullptr;
  explicit Repo(const std::string& dir) {
    git_libgit2_init();
    check(git_repository_open(&repo, dir.c_str()), "open");
  }
  ~Repo() { git_repository_free(repo); }
};

}  // namespace

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "mlenv-plan-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
  path_ = fs::canonical(pattern).string();
}

TempDir::~TempDir() {
  std::error_code error;
  fs::remove_all(path_, error);
}

ChangeDir::ChangeDir(const std::string& dir) : previous_(fs::current_path().string()) {
  fs::current_path(dir);
}
ChangeDir::~ChangeDir() {
  fs::current_path(previous_);
}

void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void init_repo(const std::string& dir, bool empty) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  git_repository_init_options options = GIT_REPOSITORY_INIT_OPTIONS_INIT;
  options.initial_head = "main";
  check(git_repository_init_ext(&repo, dir.c_str(), &options), "init");
  git_config* config = nullptr;
  check(git_repository_config(&config, repo), "config");
  git_config_set_string(config, "user.name", "Test User");
  git_config_set_string(config, "user.email", "test@example.com");
  git_config_free(config);
  git_repository_free(repo);
  if (!empty) user_commit(dir, {{"README.md", "# fleet\n"}}, "initial");
}

void user_remove(const std::string& dir, const std::string& path, const std::string& message) {
  fs::remove_all(dir + "/" + path);
  {
    Repo r(dir);
    git_index* index = nullptr;
    check(git_repository_index(&index, r.repo), "index");
    check(git_index_remove_directory(index, path.c_str(), 0), "remove");
    check(git_index_write(index), "write index");
    git_index_free(index);
  }
  user_commit(dir, {}, message);
}

void user_commit_symlink(const std::string& dir, const std::string& path, const std::string& target,
                         const std::string& message) {
  fs::create_directories(fs::path(dir + "/" + path).parent_path());
  std::error_code error;
  fs::remove(dir + "/" + path, error);
  fs::create_symlink(target, dir + "/" + path);
  user_commit(dir, {{path, ""}}, message);
}

void user_commit(const std::string& dir, const std::map<std::string, std::string>& files,
                 const std::string& text) {
  Repo r(dir);
  git_index* index = nullptr;
  check(git_repository_index(&index, r.repo), "index");
  for (const auto& [path, bytes] : files) {
    // An existing symbolic link is committed as it is (user_commit_symlink).
    if (!fs::is_symlink(fs::symlink_status(dir + "/" + path))) write_file(dir + "/" + path, bytes);
    check(git_index_add_bypath(index, path.c_str()), "add");
  }
  check(git_index_write(index), "write index");
  git_oid tree_id;
  check(git_index_write_tree(&tree_id, index), "write tree");
  git_index_free(index);
  git_tree* tree = nullptr;
  check(git_tree_lookup(&tree, r.repo, &tree_id), "tree");
  git_signature* sig = nullptr;
  check(git_signature_default(&sig, r.repo), "sig");
  git_oid parent_id;
  git_commit* parent = nullptr;
  const git_commit* parents[1];
  size_t count = 0;
  if (git_reference_name_to_id(&parent_id, r.repo, "HEAD") == 0) {
    check(git_commit_lookup(&parent, r.repo, &parent_id), "parent");
    parents[0] = parent;
    count = 1;
  }
  git_oid commit;
  check(git_commit_create(&commit, r.repo, "HEAD", sig, sig, nullptr, text.c_str(), tree, count,
                          parents),
        "commit");
  git_commit_free(parent);
  git_signature_free(sig);
  git_tree_free(tree);
}

std::string show(const std::string& dir, const std::string& rev, const std::string& path) {
  Repo r(dir);
  git_object* object = nullptr;
  if (git_revparse_single(&object, r.repo, (rev + ":" + path).c_str()) != 0) return "<missing>";
  std::string out;
  if (git_object_type(object) == GIT_OBJECT_BLOB) {
    auto* blob = reinterpret_cast<git_blob*>(object);
    out.assign(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob));
  } else {
    out = "<tree>";
  }
  git_object_free(object);
  return out;
}

std::string message(const std::string& dir, const std::string& rev) {
  Repo r(dir);
  git_object* object = nullptr;
  check(git_revparse_single(&object, r.repo, rev.c_str()), "revparse");
  std::string out = git_commit_message(reinterpret_cast<git_commit*>(object));
  git_object_free(object);
  return out;
}

std::string rev_parse(const std::string& dir, const std::string& rev) {
  Repo r(dir);
  git_object* object = nullptr;
  if (git_revparse_single(&object, r.repo, rev.c_str()) != 0) return "";
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, git_object_id(object));
  git_object_free(object);
  return hex;
}

std::string all_objects(const std::string& dir) {
  Repo r(dir);
  git_odb* odb = nullptr;
  check(git_repository_odb(&odb, r.repo), "odb");
  struct State {
    git_odb* odb;
    std::string bytes;
  } state{odb, {}};
  git_odb_foreach(
      odb,
      [](const git_oid* id, void* payload) {
        auto* s = static_cast<State*>(payload);
        git_odb_object* object = nullptr;
        if (git_odb_read(&object, s->odb, id) == 0) {
          s->bytes.append(static_cast<const char*>(git_odb_object_data(object)),
                          git_odb_object_size(object));
          git_odb_object_free(object);
        }
        return 0;
      },
      &state);
  git_odb_free(odb);
  return state.bytes;
}

std::map<std::string, std::string> index_entries(const std::string& dir) {
  Repo r(dir);
  git_index* index = nullptr;
  check(git_repository_index(&index, r.repo), "index");
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < git_index_entrycount(index); ++i) {
    const git_index_entry* entry = git_index_get_byindex(index, i);
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &entry->id);
    out[entry->path] = hex;
  }
  git_index_free(index);
  return out;
}

FakeEnv typical_env(const std::string& name) {
  std::string image = kTypicalImage;
  image.replace(image.find("ml-dev-env:"), 10, name);
  FakeEnv env;
  env.env = name;
  env.objects = {
      {"security.openshift.io/v1", "SecurityContextConstraints", "mlenvc-rdma",
       "allowPrivilegedContainer: false\n", 0, true},
      {"v1", "ServiceAccount", name + "-sa", "", 1, false},
      {"v1", "PersistentVolumeClaim", "workspace",
       "spec:\n  accessModes:\n  - ReadWriteMany\n  storageClassName: nfs\n  resources:\n    "
       "requests:\n      storage: 100Gi\n",
       3, false},
      {"v1", "ConfigMap", name + "-boot", "data:\n  boot.json: '{\"version\":1}'\n", 4, false},
      {"image.openshift.io/v1", "ImageStream", name, "spec:\n  lookupPolicy:\n    local: true\n", 5,
       false},
      {"build.openshift.io/v1", "BuildConfig", name, "spec:\n  strategy:\n    type: Docker\n", 6,
       false},
      {"v1", "Service", name + "-headless",
       "spec:\n  clusterIP: None\n  publishNotReadyAddresses: true\n  ports:\n  - name: nccl\n    "
       "port: 29500\n",
       7, false},
      {"apps/v1", "StatefulSet", name,
       "spec:\n  replicas: 2\n  serviceName: " + name +
           "-headless\n  podManagementPolicy: Parallel\n  template:\n    spec:\n      "
           "containers:\n      - name: main\n        image: \"" +
           image +
           "\"\n        env:\n        - name: "
           "PORT\n          value: \"8080\"\n        resources:\n          limits:\n            "
           "nvidia.com/gpu: 4\n",
       8, false},
      {"route.openshift.io/v1", "Route", name + "-jupyter",
       "spec:\n  to:\n    kind: Service\n    name: jupyter\n", 9, false},
  };
  env.files = {{"Dockerfile", "FROM base\nRUN pip install torch\n"}};
  env.actions = {"{\"action\": \"build\", \"after\": \"BuildConfig/" + name +
                     "\", \"build_config\": \"" + name + "\", \"image_stream_tag\": \"" + name +
                     ":latest\", \"image\": \"" + image + "\"}",
                 "{\"action\": \"rollout\", \"after\": \"StatefulSet/" + name + "\"}"};
  env.secrets = {"{\"name\": \"" + name +
                 "-oauth-cookie\", \"key\": \"cookie_secret\", \"random_bytes\": 32}"};
  env.grants = {"{\"scc\": \"mlenvc-rdma\", \"service_account\": \"" + name + "-sa\"}"};
  return env;
}

FakeObject& object(FakeEnv& env, const std::string& kind, const std::string& name) {
  for (FakeObject& o : env.objects) {
    if (o.kind == kind && o.name == name) return o;
  }
  throw std::runtime_error("no object " + kind + "/" + name);
}

target::Output render(const std::vector<FakeEnv>& envs) {
  std::map<std::string, std::string> files;
  for (const FakeEnv& env : envs) {
    const std::string dir = env.cluster + "/" + env.env + "/";
    std::ostringstream json;
    json << "{\n  \"format_version\": 1,\n  \"compiler_version\": \"0.1.0\",\n  "
         << (env.platform.empty() ? "\"target\": \"openshift\""
                                  : "\"platform\": \"" + env.platform + "\"")
         << ",\n  \"source\": \"" << env.source << "\",\n  \"cluster\": \"" << env.cluster
         << "\",\n  \"env\": \"" << env.env << "\",\n  \"namespace\": \"" << env.namespace_
         << "\",\n  \"transport\": \"rdma\",\n"
         << "  \"transport_note\": \"\",\n  \"inputs\": [";
    bool first = true;
    for (const auto& [path, bytes] : env.inputs) {
      json << (first ? "\n" : ",\n") << "    {\"path\": \"" << path << "\", \"sha256\": \""
           << sha256_hex(bytes) << "\"}";
      first = false;
    }
    json << "\n  ],\n  \"objects\": [";
    std::map<std::string, std::string> env_files = env.files;
    first = true;
    for (const FakeObject& object : env.objects) {
      std::string yaml = object_yaml(env, object);
      std::string file = object_file(object);
      if (object.admin) {
        files[env.cluster + "/_admin/" + file.substr(10)] = yaml;
      } else {
        env_files[file] = yaml;
      }
      json << (first ? "\n" : ",\n") << "    {\"address\": \"" << object.kind << "/" << object.name
           << "\", \"api_version\": \"" << object.api_version << "\", \"kind\": \"" << object.kind
           << "\", \"namespace\": \"" << (cluster_scoped(object) ? "" : env.namespace_)
           << "\", \"name\": \"" << object.name << "\", \"file\": \"" << file
           << "\", \"sha256\": \"" << sha256_hex(yaml) << "\", \"order\": " << object.order
           << ", \"admin\": " << (object.admin ? "true" : "false")
           << (object.shared ? ", \"shared\": true" : "") << "}";
      first = false;
    }
    json << "\n  ],\n  \"files\": [";
    first = true;
    for (const auto& [path, bytes] : env_files) {
      json << (first ? "\n" : ",\n") << "    {\"path\": \"" << path << "\", \"sha256\": \""
           << sha256_hex(bytes) << "\"}";
      first = false;
      files[dir + path] = bytes;
    }
    json << "\n  ]";
    auto list = [&json](const char* key, const std::vector<std::string>& items) {
      json << ",\n  \"" << key << "\": [";
      for (std::size_t i = 0; i < items.size(); ++i) json << (i ? ",\n    " : "\n    ") << items[i];
      json << "\n  ]";
    };
    if (!env.env_kind.empty()) json << ",\n  \"env_kind\": \"" << env.env_kind << "\"";
    if (!env.secrets.empty()) list("secrets", env.secrets);
    if (!env.grants.empty()) list("grants", env.grants);
    if (!env.actions.empty()) list("actions", env.actions);
    for (const std::string& member : env.more_keys) json << ",\n  " << member;
    json << "\n}\n";
    files[dir + "plan.json"] = json.str();
  }
  target::Output output;
  for (auto& [path, bytes] : files) output.files.push_back({path, bytes});
  return output;
}

}  // namespace mlenv::plan::testing
