// `mlenvc status`: what runs of each applied env, read from the cluster.

#include <algorithm>

#include "compiler/day2/commands.h"
#include "compiler/diag/render.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/kube/day2/driver.h"
#include "targets/kube/day2/session.h"
#include "targets/kube/kube_provider.h"

namespace mlenv::plan::day2 {
namespace {

using Row = std::vector<std::string>;

// What mlenv-boot published on a running pod in its status file: the transport it chose and
// the services that exited; nothing when the pod does not run or has not got past the
// rendezvous yet (the file is written once the plan is known). A file, rather than a log
// line, because a dev env's log grows for weeks and rotates; the file is always the current
// answer and reading it costs one small exec.
std::optional<BootStatus> boot_status_of(const Session& session, const RankPod& pod) {
  if (!pod.running) return std::nullopt;
  Diagnostics ignored;  // a pod still starting has no file yet: not an error of `status`
  std::optional<std::string> json =
      session.capture({"exec", "-n", session.namespace_(), pod.name, "-c", kMainContainer, "--",
                       "cat", kBootStatusFile},
                      ignored);
  std::string error;
  return json ? parse_boot_status(*json, error) : std::nullopt;
}

// The rows of the rank table: every rank of the plan, a missing pod shown as such; `exited`
// gets a line per service a rank's mlenv-boot saw exit.
std::vector<Row> rank_rows(const Session& session, const std::vector<RankPod>& pods,
                           std::vector<std::string>& exited) {
  std::vector<Row> rows = {{"RANK", "POD", "NODE", "PHASE", "RESTARTS", "TRANSPORT"}};
  int ranks = session.env().nodes;
  for (const RankPod& pod : pods) ranks = std::max(ranks, pod.rank + 1);
  for (int rank = 0; rank < ranks; ++rank) {
    auto pod =
        std::find_if(pods.begin(), pods.end(), [rank](const RankPod& p) { return p.rank == rank; });
    if (pod == pods.end()) {
      rows.push_back({std::to_string(rank), "-", "-", "Missing", "-", "-"});
      continue;
    }
    std::optional<BootStatus> status = boot_status_of(session, *pod);
    const bool known = status && !status->transport.empty();
    rows.push_back({std::to_string(rank), printable(pod->name),
                    pod->node.empty() ? "-" : printable(pod->node), printable(pod->phase),
                    std::to_string(pod->restarts), known ? printable(status->transport) : "-"});
    for (const std::string& line : status ? status->exited_services : std::vector<std::string>{}) {
      exited.push_back("rank " + std::to_string(rank) + ": " + line);
    }
  }
  return rows;
}

bool print_env(std::ostream& out, const Session& session, Diagnostics& diagnostics) {
  const AppliedEnv& env = session.env();
  out << env.unit << " (namespace " << env.plan.namespace_ << ", " << env.plan.env_kind;
  if (env.nodes > 0) out << ", " << env.nodes << (env.nodes == 1 ? " node" : " nodes");
  out << ")\n";
  std::optional<std::vector<RankPod>> pods = session.rank_pods(diagnostics);
  if (!pods) return false;
  std::vector<std::string> exited;
  print_table(out, rank_rows(session, *pods, exited));
  // A tool that died (Jupyter refusing to run as root, say) leaves the job running and its
  // port-forward leading nowhere: say so, with where to look.
  for (const std::string& line : exited) {
    out << "  " << printable(line) << " (mlenvc logs " << printable(env.unit) << ")\n";
  }
  const target::KubeProvider& platform = target::kube_provider(env.plan.platform);
  if (static_cast<int>(pods->size()) < env.nodes) platform.print_queue(out, session);
  platform.print_build(out, session);
  std::optional<std::vector<ExposedUrl>> urls = platform.exposed_urls(session, diagnostics);
  if (!urls) return false;
  for (const ExposedUrl& url : *urls)
    out << "  url: " << printable(url.url) << " (" << printable(url.name) << ")\n";
  return true;
}

}  // namespace

bool KubeDay2Driver::status(AppliedEnv env, const EnvRequest& request, std::ostream& out,
                            Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request, diagnostics);
  return session && print_env(out, *session, diagnostics);
}

}  // namespace mlenv::plan::day2
