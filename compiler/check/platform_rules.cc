// The rules every platform shares the words of (platform_rules.h): E0418 and E0419 as a
// platform reports them, and the fields an env on hosts has no place for.

#include "compiler/check/platform_rules.h"

#include <iterator>
#include <string_view>
#include <utility>

#include "compiler/check/value_paths.h"

namespace mlenv::check {

void PlatformReport::not_applicable(const std::string& field, const SourceRange& at,
                                    const Value* from) {
  if (!first(field, at)) return;
  Diagnostic& d = diagnostics_.report(
      Code::E0418, at,
      "`" + field + "` does not apply on platform `" + ir::platform_name(platform_) + "`",
      "remove it, or change the cluster's `platform` (mlenvc explain E0418 lists the fields)");
  if (from) d.notes.push_back({"`" + from->decl + "` is declared here", declared_at(*from)});
  d.notes.push_back(
      {"env `" + env_.name + "` runs on this cluster", range_at(env_.env, {"cluster"})});
}

Diagnostic* PlatformReport::missing(const std::string& field, const SourceRange& at,
                                    const std::string& why) {
  if (!first(field, at)) return nullptr;
  Diagnostic& d = diagnostics_.report(
      Code::E0419, at,
      "platform `" + std::string(ir::platform_name(platform_)) + "` needs `" + field + "`", why);
  d.notes.push_back(
      {"env `" + env_.name + "` runs on this cluster", range_at(env_.env, {"cluster"})});
  return &d;
}

bool PlatformReport::first(const std::string& field, const SourceRange& at) {
  return reported_.insert(std::to_string(at.file) + ":" + std::to_string(at.begin) + ":" + field)
      .second;
}

void PlatformRules::check_program(const ir::Program&, Diagnostics&) const {}

std::vector<PlatformField> host_fields() {
  static const PlatformField kHost[] = {
      {false, {"classes"}}, {false, {"security", "unlimited_memlock"}},
      {true, {"services"}}, {true, {"debug"}},
      {true, {"restarts"}}, {true, {"ttl"}},
      {true, {"labels"}},
  };
  return {std::begin(kHost), std::end(kHost)};
}

void report_host_fields(const PlatformEnv& v, PlatformReport& report, bool debug_on_localhost) {
  auto set = [](const Value* value) {
    return value && (value->kind == Value::Kind::List    ? !value->items.empty()
                     : value->kind == Value::Kind::Block ? !value->slots.empty()
                     : value->kind == Value::Kind::Bool || value->kind == Value::Kind::Int
                         ? value->number != 0
                         : true);
  };
  for (const PlatformField& field : host_fields()) {
    if (debug_on_localhost && field.on_env && field.path.size() == 1 &&
        std::string_view(*field.path.begin()) == "debug")
      continue;  // debugpy on 127.0.0.1 needs no port-forward
    const Value* value = get_path(field.on_env ? &v.env : &v.cluster, field.path);
    std::string name = field.on_env ? "" : "cluster";
    for (const char* step : field.path) name += (name.empty() ? "" : ".") + std::string(step);
    if (set(value)) report.not_applicable(name, value->range);
  }
  const Value* rails = v.rdma ? v.rdma->get("rails") : nullptr;
  for (const ValuePtr& rail : rails ? rails->items : ValueList{}) {
    for (const char* field : {"network", "resource", "ipam"}) {
      if (const Value* value = rail->get(field)) {
        report.not_applicable(std::string("rail.") + field, value->range);
      }
    }
  }
}

}  // namespace mlenv::check
