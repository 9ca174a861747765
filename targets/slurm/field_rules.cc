#include "targets/slurm/field_rules.h"

#include <iterator>
#include <string>

#include "compiler/base/pattern.h"
#include "compiler/check/value_paths.h"

namespace mlenv::target {
namespace {

// sbatch reads `MM:SS` (src/common/parse_time.c, time_str2mins): `48:00` is 48 minutes.
void check_time(const check::PlatformEnv& v, Diagnostics& diagnostics) {
  const check::Value* time = check::get_path(&v.cluster, {"time"});
  if (!v.first(time)) return;
  static const Pattern kMinutesSeconds = Pattern::literal(R"([0-9]+:[0-9]+)");
  if (!kMinutesSeconds.matches(time->text)) return;
  std::string first = time->text.substr(0, time->text.find(':'));
  std::string second = time->text.substr(time->text.find(':') + 1);
  const bool whole = second.find_first_not_of('0') == std::string::npos;
  diagnostics.report(Code::W0405, time->range,
                     "Slurm reads `" + time->text + "` as " + first + " minutes" +
                         (whole ? std::string() : " and " + second + " seconds"),
                     "for " + first + " hours write `" + first + ":" +
                         (second.size() == 1 ? "0" + second : second) + ":00`");
}

class SlurmRules : public check::PlatformRules {
 public:
  ir::Platform platform() const override { return ir::Platform::slurm; }

  // sbatch's options, and the host directories its containers mount.
  std::vector<check::PlatformField> fields() const override {
    static const check::PlatformField kFields[] = {
        {false, {"partition"}}, {false, {"account"}},       {false, {"qos"}},
        {false, {"time"}},      {false, {"workspace_dir"}}, {false, {"datasets_dir"}},
    };
    return {std::begin(kFields), std::end(kFields)};
  }

  bool on_hosts() const override { return true; }

  // What a job on the hosts has no place for; the partition sbatch submits to; its time limit.
  void check(const check::PlatformEnv& v, check::PlatformReport& report) const override {
    check::report_host_fields(v, report);
    if (!v.cluster.get("partition")) {
      report.missing("partition", check::declared_at(v.cluster), "sbatch submits to it");
    }
    check_time(v, report.diagnostics());
  }
};

}  // namespace

const check::PlatformRules& slurm_rules() {
  static const SlurmRules rules;
  return rules;
}

}  // namespace mlenv::target
