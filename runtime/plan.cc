#include "plan.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "exit_code.h"

namespace boot {
namespace {

// An integer that fits an int: a wider one would wrap on conversion, and rank 2^32 + 1 would pass
// for rank 1.
bool is_int32(const Json* value) {
  return value && value->is_integer() && value->as_int() >= INT32_MIN &&
         value->as_int() <= INT32_MAX;
}

// A host as a node reports it and the hostfile and MASTER_ADDR carry it: a DNS name or an IPv4
// or IPv6 address (with a zone), never a space, quote or line break.
bool plain_host(const std::string& host) {
  return !host.empty() && host.size() <= 255 && std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
           c == '_' || c == '%';
  });
}

// ncclUniqueId is 128 bytes, sent as 256 hex digits; empty without --nccl-check.
bool nccl_id_hex(const std::string& id) {
  return id.empty() || (id.size() == 256 && std::all_of(id.begin(), id.end(), [](char c) {
                          return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                        }));
}

// The transports boot.json allows the plan to choose ("rdma" also when it failed).
bool transport_allowed(const std::string& asked, const std::string& planned) {
  if (planned != "tcp" && planned != "rdma") return false;
  return asked == "auto" || asked == planned;
}

}  // namespace

std::optional<std::string> plan_mismatch(const BootConfig& config, int nnodes,
                                         const JobPlan& plan) {
  auto differs = [](const std::string& what, const std::string& planned, const std::string& mine) {
    return what + " " + planned + " differs from boot.json's " + mine;
  };
  if (plan.run_id != config.job) return differs("job", plan.run_id, config.job);
  if (plan.nnodes != nnodes) {
    return differs("nnodes", std::to_string(plan.nnodes), std::to_string(nnodes));
  }
  if (plan.nproc_per_node != config.nproc_per_node) {
    return differs("nproc_per_node", std::to_string(plan.nproc_per_node),
                   std::to_string(config.nproc_per_node));
  }
  if (plan.master_port != config.master_port) {
    return differs("master_port", std::to_string(plan.master_port),
                   std::to_string(config.master_port));
  }
  if (!transport_allowed(config.transport, plan.transport) ||
      (!plan.transport_error.empty() && config.transport != "rdma")) {
    return differs("transport", plan.transport, config.transport);
  }
  if (!std::all_of(plan.hosts.begin(), plan.hosts.end(), plain_host) || plan.hosts.empty() ||
      plan.master_addr != plan.hosts.front()) {
    return std::string("its hosts are not plain host names or addresses led by master_addr");
  }
  if (!nccl_id_hex(plan.nccl_unique_id)) return std::string("its NCCL id is not 256 hex digits");
  return std::nullopt;
}

JobPlan decide_plan(const BootConfig& config, const std::vector<NodeReport>& reports,
                    const std::string& run_id) {
  JobPlan plan;
  plan.nnodes = static_cast<int>(reports.size());
  plan.nproc_per_node = config.nproc_per_node;
  plan.run_id = run_id;
  plan.master_port = config.master_port;
  for (const NodeReport& report : reports) plan.hosts.push_back(report.host);
  plan.master_addr = plan.hosts.empty() ? "127.0.0.1" : plan.hosts.front();

  if (config.transport == "tcp") {
    plan.transport = "tcp";
    plan.transport_reason = "boot.json asks for tcp";
    return plan;
  }
  for (const NodeReport& report : reports) {
    if (report.rdma_usable) continue;
    std::string why = "node " + std::to_string(report.rank) + " (" + report.host +
                      ") cannot use RDMA: " + report.rdma_detail;
    if (config.transport == "rdma") {
      plan.transport = "rdma";
      plan.transport_reason = why;
      plan.transport_error = "transport rdma is required but " + why;
    } else {
      plan.transport = "tcp";
      plan.transport_reason = "falling back to TCP: " + why;
    }
    return plan;
  }
  plan.transport = "rdma";
  plan.transport_reason = "every node has a usable RDMA port";
  return plan;
}

Json plan_to_json(const JobPlan& plan) {
  Json hosts = Json::array();
  for (const std::string& host : plan.hosts) hosts.push(host);
  Json out = Json::object();
  out.set("nnodes", plan.nnodes)
      .set("nproc_per_node", plan.nproc_per_node)
      .set("run_id", plan.run_id)
      .set("transport", plan.transport)
      .set("transport_reason", plan.transport_reason)
      .set("transport_error", plan.transport_error)
      .set("master_addr", plan.master_addr)
      .set("master_port", plan.master_port)
      .set("hosts", std::move(hosts))
      .set("nccl_unique_id", plan.nccl_unique_id);
  return out;
}

JobPlan plan_from_json(const Json& json) {
  auto bad = [] { return BootError(kExitConfigError, "malformed plan from rank 0"); };
  auto text = [&](const char* key) {
    const Json* value = json.find(key);
    if (!value || !value->is_string()) throw bad();
    return value->as_string();
  };
  auto number = [&](const char* key) {
    const Json* value = json.find(key);
    if (!is_int32(value)) throw bad();
    return static_cast<int>(value->as_int());
  };
  JobPlan plan;
  plan.nnodes = number("nnodes");
  plan.nproc_per_node = number("nproc_per_node");
  plan.run_id = text("run_id");
  plan.transport = text("transport");
  plan.transport_reason = text("transport_reason");
  plan.transport_error = text("transport_error");
  plan.master_addr = text("master_addr");
  plan.master_port = number("master_port");
  plan.nccl_unique_id = text("nccl_unique_id");
  const Json* hosts = json.find("hosts");
  if (!hosts || !hosts->is_array()) throw bad();
  for (const Json& host : hosts->as_array()) {
    if (!host.is_string()) throw bad();
    plan.hosts.push_back(host.as_string());
  }
  if (static_cast<int>(plan.hosts.size()) != plan.nnodes) throw bad();
  return plan;
}

Json report_to_json(const NodeReport& report) {
  Json out = Json::object();
  out.set("rank", report.rank)
      .set("host", report.host)
      .set("rdma_usable", report.rdma_usable)
      .set("rdma_detail", report.rdma_detail)
      .set("gpu_count", report.gpu_count);
  return out;
}

bool report_from_json(const Json& json, NodeReport& report) {
  const Json* rank = json.find("rank");
  const Json* host = json.find("host");
  const Json* usable = json.find("rdma_usable");
  const Json* detail = json.find("rdma_detail");
  const Json* gpus = json.find("gpu_count");
  if (!is_int32(rank) || !host || !host->is_string() || !usable || !usable->is_bool() || !detail ||
      !detail->is_string() || !is_int32(gpus)) {
    return false;
  }
  report.rank = static_cast<int>(rank->as_int());
  report.host = host->as_string();
  report.rdma_usable = usable->as_bool();
  report.rdma_detail = detail->as_string();
  report.gpu_count = static_cast<int>(gpus->as_int());
  return true;
}

}  // namespace boot
