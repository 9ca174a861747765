#include "targets/common/assembly.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "compiler/base/parallel.h"
#include "targets/common/dockerfile.h"
#include "targets/common/output_order.h"
#include "targets/runtime_sources.h"

namespace mlenv::target {
namespace {

// E0413: `env` emits the shared object at `address` (Object::shared) with other bytes than
// `first` did, in the same namespace of the same API server.
void report_shared_conflict(const std::string& address, const std::string& namespace_name,
                            const ir::Env& env, const ir::Env& first, Diagnostics& diagnostics) {
  Diagnostic& d = diagnostics.report(
      Code::E0413, env.cluster.range,
      "env `" + env.name + "` and env `" + first.name + "` emit different " + address +
          " in namespace `" + namespace_name + "`",
      "clusters that share a namespace must agree on its attachments, ServiceAccount and "
      "claims, and an env's own claims need a name no cluster's claims have");
  d.notes.push_back({"the other env's cluster", first.cluster.range});
}

}  // namespace

bool SharedObjects::add(const EnvLayout& layout, const std::string& address,
                        const std::string& bytes, Diagnostics& diagnostics) {
  std::string key = layout.env->cluster.api + " " + layout.namespace_name + " " + address;
  auto [first, added] = seen_.try_emplace(std::move(key), First{layout.env, bytes, false});
  if (added || first->second.bytes == bytes || first->second.reported) return added;
  report_shared_conflict(address, layout.namespace_name, *layout.env, *first->second.env,
                         diagnostics);
  first->second.reported = true;
  return false;
}

namespace {

// A cluster's `_admin/` objects: every env of the cluster emits them; one copy is written.
struct ClusterAdmin {
  std::vector<File> files;  ///< in first-seen order
  std::set<std::string> addresses;
};

// What the merge carries from env to env, in program order: the shared objects seen, each
// cluster's admin objects and every env's notes. Both `assemble` and `stream_program` merge
// through it, so the tree's stream and the streamed objects are the same.
struct Merge {
  SharedObjects shared;
  std::map<std::string, ClusterAdmin> admin;  ///< by cluster directory
  std::vector<Note> notes;

  // Adds the admin objects of one env, each address once per cluster (a cluster without any
  // has no `_admin/`).
  void add_admin(const EnvLayout& layout, std::vector<std::pair<std::string, File>>& files) {
    if (files.empty()) return;
    ClusterAdmin& cluster_admin = admin[layout.cluster];
    for (auto& [address, file] : files) {
      if (cluster_admin.addresses.insert(address).second) {
        cluster_admin.files.push_back(std::move(file));
      }
    }
  }

  // Takes env `env`'s diagnostics and notes; the indices of its objects that an earlier env
  // already put in the stream (shared objects).
  std::set<std::size_t> take(const EnvLayout& layout, EnvOutput& env, Diagnostics& diagnostics) {
    diagnostics.append(env.diagnostics);
    std::set<std::size_t> repeated;
    for (const auto& [address, index] : env.shared) {
      if (!shared.add(layout, address, env.files[index].content, diagnostics)) {
        repeated.insert(index);
      }
    }
    notes.insert(notes.end(), env.notes.begin(), env.notes.end());
    return repeated;
  }
};

// One layout per env, in program order; `prepare`, when given, sees them all.
std::vector<EnvLayout> layouts_of(
    const ir::Program& program, const std::function<void(const std::vector<EnvLayout>&)>& prepare) {
  std::vector<EnvLayout> layouts;
  layouts.reserve(program.envs.size());
  for (const ir::Env& env : program.envs) layouts.push_back(make_layout(env));
  if (prepare) prepare(layouts);
  return layouts;
}

}  // namespace

std::vector<std::string> grouped(const std::vector<Note>& notes) {
  constexpr std::size_t kNamed = 5;
  std::map<std::string, std::vector<std::string>> by_text;
  for (const Note& note : notes) by_text[note.text].push_back(note.subject);
  std::vector<std::string> out;
  for (auto& [text, subjects] : by_text) {
    std::sort(subjects.begin(), subjects.end());
    subjects.erase(std::unique(subjects.begin(), subjects.end()), subjects.end());
    if (subjects.size() == 1 && subjects[0].empty()) {
      out.push_back(text);
      continue;
    }
    std::string line;
    for (std::size_t i = 0; i < subjects.size() && i < kNamed; ++i) {
      line += (i ? ", " : "") + subjects[i];
    }
    if (subjects.size() > kNamed) {
      line += " and " + std::to_string(subjects.size() - kNamed) + " more";
    }
    out.push_back(line + ": " + text);
  }
  return out;
}

Output assemble(const std::vector<EnvLayout>& layouts, std::vector<EnvOutput> rendered, bool tree,
                Diagnostics& diagnostics, std::vector<File> program_files,
                const AdminIndex* admin_index) {
  const std::size_t n = rendered.size();
  Output out;
  std::vector<std::size_t> stream;  // env object files, in apply order within each env
  Merge merge;
  for (std::size_t i = 0; i < n; ++i) {
    EnvOutput& env = rendered[i];
    std::set<std::size_t> repeated = merge.take(layouts[i], env, diagnostics);
    merge.add_admin(layouts[i], env.admin);
    for (std::size_t k = 0; k < env.files.size(); ++k) {
      if (k < env.objects && repeated.count(k) == 0) stream.push_back(out.files.size());
      out.files.push_back(std::move(env.files[k]));
    }
    env = EnvOutput();  // its memory is not needed twice
  }

  // Cluster-scoped objects first in the stream, once per cluster; then env objects in order.
  std::vector<std::size_t> admin_stream;
  for (auto& [cluster, a] : merge.admin) {
    std::vector<std::string> resources;
    for (File& f : a.files) {
      resources.push_back(f.path.substr(cluster.size() + 8));  // strip `<cluster>/_admin/`
      admin_stream.push_back(out.files.size());
      out.files.push_back(std::move(f));
    }
    if (tree && admin_index != nullptr) {
      out.files.push_back(
          {cluster + "/_admin/" + admin_index->file, admin_index->write(resources)});
    }
  }
  if (tree && n > 0) {
    for (File& f : program_files) out.files.push_back(std::move(f));
    for (const auto& [path, bytes] : runtime_sources()) {
      out.files.push_back({std::string(kRuntimeDir) + "/" + std::string(path), std::string(bytes)});
    }
  }

  for (std::size_t i : admin_stream) out.stream.push_back(i);
  for (std::size_t i : stream) out.stream.push_back(i);
  sort_files(out);
  out.notes = grouped(merge.notes);
  std::set<std::pair<std::string, std::string>> listed;  // a cluster's note comes from each env
  for (Note& note : merge.notes) {
    if (listed.emplace(note.subject, note.text).second)
      out.note_details.emplace_back(std::move(note.subject), std::move(note.text));
  }
  return out;
}

Output render_program(const ir::Program& program, ir::Platform platform, Scope scope,
                      Diagnostics& diagnostics, const EnvRenderer& render_env,
                      const AdminIndex* admin_index,
                      const std::function<void(const std::vector<EnvLayout>&)>& prepare) {
  const bool tree = scope == Scope::Tree;
  PlanContext context;
  context.platform = platform;
  context.source = program.source;
  if (tree) context.inputs = plan_inputs(program.inputs);
  const std::size_t n = program.envs.size();
  std::vector<EnvLayout> layouts = layouts_of(program, prepare);
  // Envs render independently (in parallel); assemble merges them in program order.
  std::vector<EnvOutput> rendered(n);
  parallel_for(n, [&](std::size_t i) { rendered[i] = render_env(layouts, i, context, tree); });
  return assemble(layouts, std::move(rendered), tree, diagnostics, {program_inputs_file(context)},
                  admin_index);
}

std::vector<std::string> stream_program(
    const ir::Program& program, ir::Platform platform, Diagnostics& diagnostics,
    const EnvRenderer& render_env, const AdminRenderer& render_admin, const ObjectSink& write,
    const std::function<void(const std::vector<EnvLayout>&)>& prepare) {
  PlanContext context;
  context.platform = platform;
  context.source = program.source;
  const std::size_t n = program.envs.size();
  std::vector<EnvLayout> layouts = layouts_of(program, prepare);
  // Every cluster's admin objects come first in the stream, and any env may add to them: they
  // are built alone (a few small objects per env) and written before any env is rendered.
  Merge merge;
  if (render_admin) {
    for (const EnvLayout& layout : layouts) {
      std::vector<std::pair<std::string, File>> files = render_admin(layout);
      merge.add_admin(layout, files);
    }
  }
  for (const auto& [cluster, a] : merge.admin) {
    for (const File& f : a.files) write(f);
  }
  // Then the envs, a batch at a time: rendered in parallel, written in program order.
  constexpr std::size_t kBatch = 256;
  std::vector<EnvOutput> rendered;
  for (std::size_t first = 0; first < n; first += kBatch) {
    const std::size_t count = std::min(kBatch, n - first);
    rendered.assign(count, EnvOutput());
    parallel_for(count, [&](std::size_t k) {
      rendered[k] = render_env(layouts, first + k, context, false);
    });
    for (std::size_t k = 0; k < count; ++k) {
      const EnvLayout& layout = layouts[first + k];
      EnvOutput& env = rendered[k];
      for (const auto& [address, file] : env.admin) {
        if (merge.admin[layout.cluster].addresses.count(address) == 0) {
          throw std::logic_error(file.path + " is missing from the env's admin objects");
        }
      }
      std::set<std::size_t> repeated = merge.take(layout, env, diagnostics);
      for (std::size_t i = 0; i < env.objects; ++i) {
        if (repeated.count(i) == 0) write(env.files[i]);
      }
    }
  }
  return grouped(merge.notes);
}

}  // namespace mlenv::target
