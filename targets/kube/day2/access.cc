// shell, port-forward and urls: reaching what runs in an env's pods.

#include "compiler/day2/commands.h"
#include "compiler/diag/render.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/kube/day2/driver.h"
#include "targets/kube/day2/session.h"
#include "targets/kube/day2/sync_forward.h"
#include "targets/kube/kube_provider.h"

namespace mlenv::plan::day2 {
namespace {

// A login shell sources /etc/profile.d, where the image reads mlenv-boot's env.sh (the job's
// NCCL variables); bash when the image has it, else sh. A failed `exec` of a missing program
// would end a POSIX sh, so bash is looked up first.
constexpr const char* kLoginShell = "command -v bash >/dev/null && exec bash -l; exec sh -l";

}  // namespace

int KubeDay2Driver::shell(AppliedEnv env, const ShellRequest& request,
                          Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request.target, diagnostics);
  if (!session) return 1;
  std::optional<RankPod> pod = session->running_pod(request.rank, diagnostics);
  if (!pod) return 1;
  std::vector<std::string> args = {"exec",         request.tty ? "-it" : "-i",
                                   "-n",           session->namespace_(),
                                   pod->name,      "-c",
                                   kMainContainer, "--",
                                   "/bin/sh",      "-c",
                                   kLoginShell};
  return run_attached(session->argv(args));
}

std::optional<int> forwarded_port(const Session& session, const std::string& service,
                                  Diagnostics& diagnostics) {
  const std::map<std::string, int>& ports = session.env().ports;
  auto it = ports.find(service);
  if (it != ports.end()) return it->second;
  Diagnostic& d = diagnostics.report(
      Code::E0753, {}, "`" + session.env().unit + "` has no port `" + printable(service) + "`",
      service == "debugpy" ? "set `debug = true` on the env, plan and apply"
                           : "name one of the env's services");
  for (const auto& [name, port] : ports)
    d.notes.push_back({"`" + name + "`: " + std::to_string(port), {}});
  return std::nullopt;
}

std::optional<std::vector<std::string>> forward_argv(const Session& session, int port,
                                                     int local_port, Diagnostics& diagnostics) {
  std::optional<RankPod> pod = session.running_pod(0, diagnostics);
  if (!pod) return std::nullopt;
  const int local = local_port > 0 ? local_port : port;
  return session.argv({"port-forward", "-n", session.namespace_(), "pod/" + pod->name,
                       std::to_string(local) + ":" + std::to_string(port)});
}

int KubeDay2Driver::port_forward(AppliedEnv env, const PortForwardRequest& request,
                                 Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request.target, diagnostics);
  if (!session) return 1;
  std::optional<int> port = forwarded_port(*session, request.service, diagnostics);
  if (!port) return 1;
  std::optional<std::vector<std::string>> argv =
      forward_argv(*session, *port, request.local_port, diagnostics);
  return argv ? run_attached(*argv) : 1;
}

int KubeDay2Driver::urls(AppliedEnv env, const EnvRequest& request, std::ostream& out,
                         Diagnostics& diagnostics) const {
  std::optional<Session> session = Session::of(std::move(env), request, diagnostics);
  if (!session) return 1;
  std::optional<std::vector<ExposedUrl>> urls =
      target::kube_provider(session->env().plan.platform).exposed_urls(*session, diagnostics);
  if (!urls) return 1;
  if (urls->empty()) {
    out << session->env().unit << " exposes no URL\n";
    // Kubernetes' tools (and any platform's debugpy) are reached through a port-forward.
    for (const auto& [tool, port] : session->env().plan.ports) {
      out << "  " << printable(tool) << " (port " << port << "): mlenvc port-forward "
          << printable(session->name()) << ' ' << printable(tool) << '\n';
    }
  }
  for (const ExposedUrl& url : *urls)
    out << printable(url.name) << "  " << printable(url.url) << '\n';
  return 0;
}

}  // namespace mlenv::plan::day2
