#pragma once
// The OpenShift target: for every env, the output tree of design/product.md ("What it emits").

#include "targets/common/env_layout.h"
#include "targets/common/object.h"
#include "targets/target.h"

namespace mlenv::target::openshift {

class OpenShiftTarget : public Target {
 public:
  std::string_view name() const override { return ir::platform_name(ir::Platform::openshift); }
  Output render(const ir::Program& program, Diagnostics& diagnostics, Scope scope) const override;
  std::vector<std::string> check(const ir::Program& program,
                                 Diagnostics& diagnostics) const override;
  std::vector<std::string> stream(const ir::Program& program, Diagnostics& diagnostics,
                                  const ObjectSink& write) const override;
};

/// The env's objects for the platform team (`_admin/`, marked `admin`): the IPC_LOCK SCC and
/// the grant of its `use`, when the env needs them; the first of env_objects.
std::vector<Object> admin_objects(const EnvLayout& layout);

/// The objects of one env in apply order (cluster-scoped ones included, marked `admin`);
/// `boot_json` is the env's bootstrap config (boot_json), which its ConfigMap holds;
/// `account_annotations` go on its ServiceAccount (the OAuth redirects of every env using it).
std::vector<Object> env_objects(const EnvLayout& layout, const std::string& boot_json,
                                const std::map<std::string, std::string>& account_annotations);

}  // namespace mlenv::target::openshift
