// `mlenvc logs`: every rank's log, one stream of whole lines prefixed with the rank.

#include "compiler/apply/runner.h"
#include "compiler/day2/commands.h"
#include "compiler/day2/line_stream.h"
#include "compiler/diag/render.h"
#include "targets/kube/day2/driver.h"
#include "targets/kube/day2/session.h"

namespace mlenv::plan::day2 {
namespace {

LineSource log_of(const Session& session, const RankPod& pod, bool follow) {
  std::vector<std::string> args = {"logs",   "-n", session.namespace_(),
                                   pod.name, "-c", kMainContainer};
  if (follow) args.push_back("-f");
  return {session.argv(args), "[" + std::to_string(pod.rank) + "] "};
}

// The pods asked for: one rank, or every rank that has a pod.
std::optional<std::vector<RankPod>> selected_pods(const Session& session,
                                                  const std::optional<int>& rank,
                                                  Diagnostics& diagnostics) {
  if (rank && !session.check_rank(*rank, diagnostics)) return std::nullopt;
  std::optional<std::vector<RankPod>> pods = session.rank_pods(diagnostics);
  if (!pods) return std::nullopt;
  std::vector<RankPod> out;
  for (RankPod& pod : *pods) {
    if (!rank || pod.rank == *rank) out.push_back(std::move(pod));
  }
  if (out.empty()) {
    diagnostics.report(
        Code::E0752, {},
        (rank ? "rank " + std::to_string(*rank) + " of `" + session.env().unit + "` has no pod"
              : "no rank of `" + session.env().unit + "` has a pod"),
        "see `mlenvc status " + session.env().unit + "`");
    return std::nullopt;
  }
  return out;
}

}  // namespace

int KubeDay2Driver::logs(AppliedEnv env, const LogsRequest& request, std::ostream& out,
                         Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request.target, diagnostics);
  if (!session) return 1;
  std::optional<std::vector<RankPod>> pods = selected_pods(*session, request.rank, diagnostics);
  if (!pods) return 1;
  std::vector<LineSource> sources;
  for (const RankPod& pod : *pods) sources.push_back(log_of(*session, pod, request.follow));
  std::vector<int> statuses;
  if (request.follow) {
    // Every rank at once, for as long as the user watches: no deadline.
    statuses = stream_lines(sources, out, 0);
  } else {
    // One rank after another, so each rank's log reads in one piece.
    for (const LineSource& source : sources) {
      std::vector<int> one = stream_lines({source}, out, request.target.timeout_seconds);
      statuses.push_back(one[0]);
    }
  }
  bool ok = true;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (statuses[i] == 0) continue;
    ok = false;
    diagnostics.report(
        statuses[i] == 124 ? Code::E0707 : Code::E0706, {},
        "`" + shell_words(sources[i].argv) + "` " +
            (statuses[i] == 124 ? std::string("did not finish in time")
                                : "exited with status " + std::to_string(statuses[i])));
  }
  return ok ? 0 : 1;
}

}  // namespace mlenv::plan::day2
