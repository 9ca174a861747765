#include "boot_status.h"

#include "log.h"
#include "util.h"

namespace boot {

std::string status_file_path(const std::string& shell_env) {
  if (shell_env.empty()) return {};
  std::size_t slash = shell_env.rfind('/');
  return (slash == std::string::npos ? std::string() : shell_env.substr(0, slash + 1)) +
         "status.json";
}

Json status_document(const std::string& job, int node_rank, const JobPlan& plan) {
  Json out = Json::object();
  out.set("format_version", 1)
      .set("job", job)
      .set("node_rank", node_rank)
      .set("nnodes", plan.nnodes)
      .set("world_size", plan.world_size())
      .set("transport", plan.transport)
      .set("transport_reason", plan.transport_reason);
  return out;
}

void add_exited_service(Json& document, const std::string& name, int code) {
  Json exited = Json::object();
  exited.set("name", name).set("code", code);
  const Json* before = document.find("exited_services");
  Json all = before ? *before : Json::array();
  all.push(std::move(exited));
  document.set("exited_services", std::move(all));
}

void write_status_file(const std::string& path, const Json& document) {
  if (path.empty()) return;
  if (!make_parent_dirs(path) || !write_file_atomic(path, document.dump() + "\n")) {
    log_warning("cannot write the status file " + path);
  }
}

}  // namespace boot
