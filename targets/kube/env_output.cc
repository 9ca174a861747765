#include "targets/kube/env_output.h"

#include <algorithm>

#include "compiler/base/sha256.h"
#include "targets/common/yaml_writer.h"
#include "targets/kube/builders.h"

namespace mlenv::target::kube {
namespace {

std::pair<std::string, File> admin_entry(const EnvLayout& layout, const Object& o,
                                         const std::string& file, std::string bytes) {
  return {o.address(), {layout.cluster + "/_admin/" + file, std::move(bytes)}};
}

}  // namespace

std::vector<std::pair<std::string, File>> admin_output(const EnvLayout& layout,
                                                       const std::vector<Object>& objects) {
  std::vector<std::pair<std::string, File>> out;
  for (const Object& o : objects) {
    if (o.admin) out.push_back(admin_entry(layout, o, o.file_name(), to_yaml(o.body)));
  }
  return out;
}

EnvOutput env_output(const EnvLayout& layout, const std::vector<Object>& objects,
                     std::vector<EnvFile> files, const PlanActions& steps,
                     const PlanContext& context, bool tree) {
  EnvOutput out;
  std::vector<PlannedObject> planned;
  std::vector<PlannedFile> listed;
  std::vector<std::string> resources;
  for (const Object& o : objects) {
    std::string file = o.file_name();
    std::string bytes = to_yaml(o.body);
    std::string sha = tree ? sha256_hex(bytes) : "";
    if (o.admin) {
      planned.push_back({&o, "../_admin/" + file, std::move(sha)});
      out.admin.push_back(admin_entry(layout, o, file, std::move(bytes)));
      continue;
    }
    if (o.shared) out.shared.emplace_back(o.address(), out.files.size());
    if (tree) {
      planned.push_back({&o, file, sha});
      listed.push_back({file, std::move(sha)});
      resources.push_back(file);
    }
    out.files.push_back({layout.dir + "/" + file, std::move(bytes)});
  }
  out.objects = out.files.size();
  if (tree) {
    auto add_file = [&](std::string name, std::string bytes) {
      listed.push_back({name, sha256_hex(bytes)});
      out.files.push_back({layout.dir + "/" + name, std::move(bytes)});
    };
    for (EnvFile& file : files) add_file(std::move(file.name), std::move(file.bytes));
    add_file("kustomization.yaml", kube::kustomization(resources));
    std::sort(listed.begin(), listed.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    out.files.push_back(
        {layout.dir + "/plan.json", plan_json(layout, context, planned, listed, steps)});
  }

  return out;
}

}  // namespace mlenv::target::kube
