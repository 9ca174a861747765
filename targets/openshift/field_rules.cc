#include "targets/openshift/field_rules.h"

#include <set>
#include <string>

#include "compiler/check/value_paths.h"
#include "targets/kube/field_rules.h"

namespace mlenv::target {
namespace {

// Root in the container is what makes IPC_LOCK effective (kubernetes/kubernetes#56374); these
// built-in OpenShift SCCs either force a non-root UID or allow no added capability.
bool scc_cannot_lock_memory(const std::string& scc) {
  static const std::set<std::string> kBuiltIn = {
      "restricted", "restricted-v2", "restricted-v3",  "nonroot",          "nonroot-v2",
      "anyuid",     "hostnetwork",   "hostnetwork-v2", "hostmount-anyuid", "hostaccess"};
  return kBuiltIn.count(scc) != 0;
}

// E0501 and E0505: the SCC the cluster names must give RDMA its IPC_LOCK, and never be
// `privileged`.
void check_scc(const check::PlatformEnv& v, Diagnostics& diagnostics) {
  const check::Value* scc = check::get_path(&v.cluster, {"security", "scc"});
  if (!scc) return;
  if (scc->text == "privileged") {
    diagnostics.report(Code::E0501, scc->range, "the `privileged` SCC is never granted",
                       "unset `scc` to get an IPC_LOCK-only SCC, or name one that allows it");
  } else if (v.uses_rdma && scc_cannot_lock_memory(scc->text) &&
             check::int_at(&v.cluster, {"security", "unlimited_memlock"}, 0) == 0) {
    Diagnostic& d = diagnostics.report(
        Code::E0505, scc->range,
        "SCC `" + scc->text + "` cannot give env `" + v.name + "` the IPC_LOCK RDMA needs",
        "unset `scc` to get mlenvc's IPC_LOCK-only SCC, or set `unlimited_memlock = true` "
        "where the container runtime grants unlimited memlock");
    d.notes.push_back({"env `" + v.name + "` uses RDMA", check::range_at(v.env, {"network"})});
  }
}

class OpenShiftRules : public check::PlatformRules {
 public:
  ir::Platform platform() const override { return ir::Platform::openshift; }

  std::vector<check::PlatformField> fields() const override {
    static const check::PlatformField kScc = {false, {"security", "scc"}};
    std::vector<check::PlatformField> fields = kube_fields();
    fields.push_back(kScc);
    return fields;
  }

  // Kube's needs; `image.registry`, which an OpenShift build does not use (W0402); the SCC.
  void check(const check::PlatformEnv& v, check::PlatformReport& report) const override {
    check_kube_needs(v, report);
    const check::Value* registry = check::get_path(v.env.get("image"), {"registry"});
    if (registry && report.first("registry", registry->range)) {
      report.diagnostics().report(Code::W0402, registry->range,
                                  "`image.registry` is ignored on OpenShift: env `" + v.name +
                                      "` is built into its ImageStream");
    }
    check_scc(v, report.diagnostics());
  }
};

}  // namespace

const check::PlatformRules& openshift_rules() {
  static const OpenShiftRules rules;
  return rules;
}

}  // namespace mlenv::target
