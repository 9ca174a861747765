#include "targets/kube/field_rules.h"

#include <iterator>

#include "compiler/check/value_paths.h"

namespace mlenv::target {

std::vector<check::PlatformField> kube_fields() {
  static const check::PlatformField kFields[] = {
      {false, {"namespace"}},
      {false, {"storage"}},
      {false, {"security", "service_account"}},
      {true, {"storage"}},
  };
  return {std::begin(kFields), std::end(kFields)};
}

void check_kube_needs(const check::PlatformEnv& v, check::PlatformReport& report) {
  if (!v.cluster.get("namespace")) {
    report.missing("namespace", check::declared_at(v.cluster), "every object lives in it");
  }
  if (!v.cluster.get("storage")) {
    report.missing("storage", check::declared_at(v.cluster),
                   "the workspace and datasets volumes are claims of its class");
  }
  if (!v.env.get("image")) {
    report.missing("image", check::declared_at(v.env),
                   "its pods run the image; only a Slurm or local env can run on the host");
  }
}

}  // namespace mlenv::target
