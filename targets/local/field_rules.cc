#include "targets/local/field_rules.h"

#include <iterator>

namespace mlenv::target {
namespace {

class LocalRules : public check::PlatformRules {
 public:
  ir::Platform platform() const override { return ir::Platform::local; }

  // What runs an env with an image: podman, docker or the host.
  std::vector<check::PlatformField> fields() const override {
    static const check::PlatformField kFields[] = {{false, {"runtime"}}};
    return {std::begin(kFields), std::end(kFields)};
  }

  // Its nodes are processes (or host-network containers) of this machine, never pods.
  bool on_hosts() const override { return true; }

  // What processes on this machine have no place for; they need nothing more.
  void check(const check::PlatformEnv& v, check::PlatformReport& report) const override {
    check::report_host_fields(v, report);
  }
};

}  // namespace

const check::PlatformRules& local_rules() {
  static const LocalRules rules;
  return rules;
}

}  // namespace mlenv::target
