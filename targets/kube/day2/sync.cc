// `mlenvc sync`: a local directory into /workspace of the env's pods, once or on every change.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "compiler/apply/runner.h"
#include "compiler/day2/commands.h"
#include "compiler/diag/render.h"
#include "targets/kube/day2/driver.h"
#include "targets/kube/day2/sync_forward.h"

namespace mlenv::plan::day2 {
namespace {

namespace fs = std::filesystem;

/// What --watch compares: each file's size and modification time, by path.
using Fingerprint = std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>>;

Fingerprint fingerprint(const std::string& dir) {
  Fingerprint out;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code ignored;  // a file removed while walking is seen at the next round
    const bool file = it->is_regular_file(ignored);
    out[it->path().string()] = {file ? it->file_size(ignored) : 0, it->last_write_time(ignored)};
  }
  return out;
}

// The client's copy of `dir`'s contents into /workspace of `pod`. oc rsync copies the contents
// of a source ending in `/` (rsync's rule) and, with --no-perms, does not try to set the
// permissions of /workspace, which the pod's arbitrary UID may not own
// (https://docs.openshift.com/container-platform/4.16/nodes/containers/nodes-containers-copying-files.html).
// kubectl has no rsync: `cp DIR/. POD:/workspace` copies the contents.
std::vector<std::string> copy_args(const Session& session, const std::string& dir,
                                   const RankPod& pod) {
  std::string source = dir;
  while (source.size() > 1 && source.back() == '/') source.pop_back();
  if (session.is_oc()) {
    return {"rsync",        "-n",         session.namespace_(), "-c",
            kMainContainer, "--no-perms", source + "/",         pod.name + ":/workspace"};
  }
  return {"cp",           "-n",          session.namespace_(),    "-c",
          kMainContainer, source + "/.", pod.name + ":/workspace"};
}

// The pods holding a /workspace: rank 0's when every pod mounts the same one (rwx), else all.
std::optional<std::vector<RankPod>> workspace_pods(const Session& session,
                                                   Diagnostics& diagnostics) {
  std::optional<std::vector<RankPod>> pods = session.rank_pods(diagnostics);
  if (!pods) return std::nullopt;
  std::vector<RankPod> out;
  int ranks = std::max(session.env().nodes, 1);
  for (const RankPod& pod : *pods) ranks = std::max(ranks, pod.rank + 1);
  if (session.env().shared_workspace) ranks = 1;
  for (int rank = 0; rank < ranks; ++rank) {
    auto pod = std::find_if(pods->begin(), pods->end(),
                            [rank](const RankPod& p) { return p.rank == rank; });
    if (pod != pods->end() && pod->running) {
      out.push_back(*pod);
      continue;
    }
    diagnostics.report(
        Code::E0752, {},
        "rank " + std::to_string(rank) + " of `" + session.env().unit + "` " +
            (pod == pods->end() ? "has no pod"
                                : "(pod `" + printable(pod->name) + "`) is " +
                                      printable(pod->phase) + ", not running"),
        "its /workspace was not synced; see `mlenvc status " + session.env().unit + "`");
  }
  return out;
}

// One sync of `dir` to every pod that holds a workspace; false when one failed.
bool sync_once(const Session& session, const std::string& dir, std::ostream& out,
               Diagnostics& diagnostics) {
  std::optional<std::vector<RankPod>> pods = workspace_pods(session, diagnostics);
  if (!pods) return false;
  bool ok = !diagnostics.has_errors();
  for (const RankPod& pod : *pods) {
    out << "Syncing " << dir << " to /workspace of rank " << pod.rank << " (" << pod.name << ")\n";
    out.flush();
    // The client's file listing is not shown; when it fails, its own message (stderr) is.
    ok = session.capture(copy_args(session, dir, pod), diagnostics).has_value() && ok;
  }
  return ok;
}

}  // namespace

int sync_with(const Session& session, const SyncRequest& request, std::ostream& out,
              Diagnostics& diagnostics) {
  bool ok = sync_once(session, request.dir, out, diagnostics);
  if (!request.watch) return ok ? 0 : 1;
  out << "Watching " << request.dir << " (Ctrl-C stops)\n";
  out.flush();
  Fingerprint last = fingerprint(request.dir);
  while (request.keep_watching()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(request.poll_ms));
    Fingerprint now = fingerprint(request.dir);
    if (now == last) continue;
    last = std::move(now);
    // A failed round is reported and the watch goes on: the next change may find the pod back.
    Session round = session;
    round.restart_deadline();
    sync_once(round, request.dir, out, diagnostics);
  }
  return diagnostics.has_errors() ? 1 : 0;
}

int KubeDay2Driver::sync(AppliedEnv env, const SyncRequest& request, std::ostream& out,
                         Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request.target, diagnostics);
  if (!session) return 1;
  return sync_with(*session, request, out, diagnostics);
}

}  // namespace mlenv::plan::day2
