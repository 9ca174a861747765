#include "targets/common/plan_json.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

#include "compiler/base/file_name.h"
#include "compiler/base/sha256.h"
#include "compiler/base/version.h"
#include "compiler/diag/render.h"
#include "targets/common/json_writer.h"
#include "targets/provider.h"

namespace mlenv::plan {
namespace {

using target::Value;

// plan.json is JSON, which YAML 1.2 reads as flow style; yaml-cpp is already a dependency.
std::string text_of(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || !value.IsScalar())
    throw std::runtime_error(std::string("missing string `") + key + "`");
  return value.Scalar();
}

std::vector<PlanDigest> digests_of(const YAML::Node& node, const char* key) {
  std::vector<PlanDigest> out;
  const YAML::Node list = node[key];
  if (!list || !list.IsSequence())
    throw std::runtime_error(std::string("missing list `") + key + "`");
  for (const YAML::Node& item : list)
    out.push_back({text_of(item, "path"), text_of(item, "sha256")});
  return out;
}

// The optional string `key`, or `fallback` when absent.
std::string optional_text(const YAML::Node& node, const char* key, const char* fallback) {
  const YAML::Node value = node[key];
  if (!value) return fallback;
  if (!value.IsScalar()) throw std::runtime_error(std::string("`") + key + "` is not a string");
  return value.Scalar();
}

// The optional list `key` (absent: empty).
YAML::Node optional_list(const YAML::Node& node, const char* key) {
  const YAML::Node list = node[key];
  if (list && !list.IsSequence())
    throw std::runtime_error(std::string("`") + key + "` is not a list");
  return list;
}

// Plans written before `actions` existed: what apply did after their objects then, which the
// provider of the plan's platform says.
std::vector<PlanAction> implied_actions(const PlanManifest& plan) {
  std::vector<PlanAction> out;
  const target::Provider& provider = target::provider(plan.platform);
  for (const PlanObject& object : plan.objects) provider.add_implied_actions(object, out);
  return out;
}

// The keys the day-2 commands read (`nodes`, `storage`, `ports`), each optional.
void read_day2_keys(const YAML::Node& root, PlanManifest& plan) {
  if (const YAML::Node nodes = root["nodes"]) plan.nodes = nodes.as<int>();
  if (plan.nodes < 0) throw std::runtime_error("`nodes` is negative");
  const YAML::Node storage = root["storage"];
  std::string mode = storage ? storage.as<std::string>() : "per_pod";
  if (mode != "rwx" && mode != "per_pod")
    throw std::runtime_error("unknown storage `" + printable(mode) + "`");
  plan.shared_workspace = mode == "rwx";
  if (const YAML::Node ports = root["ports"]) {
    for (const auto& item : ports) {
      int port = item.second.as<int>();
      if (port < 1 || port > 65535) throw std::runtime_error("a port is out of range");
      std::string name = item.first.as<std::string>();
      auto named = [&name](const auto& listed) { return listed.first == name; };
      auto listed = std::find_if(plan.ports.begin(), plan.ports.end(), named);
      if (listed != plan.ports.end()) {
        listed->second = port;  // a repeated key: the last one, as a JSON object reads
      } else {
        plan.ports.emplace_back(std::move(name), port);
      }
    }
  }
}

void read_additions(const YAML::Node& root, PlanManifest& plan) {
  read_day2_keys(root, plan);
  plan.env_kind = optional_text(root, "env_kind", "dev");
  if (plan.env_kind != "dev" && plan.env_kind != "run" && plan.env_kind != "acceptance")
    throw std::runtime_error("unknown env_kind `" + plan.env_kind + "`");
  for (const YAML::Node& item : optional_list(root, "secrets")) {
    PlanSecret secret{text_of(item, "name"), text_of(item, "key"), item["random_bytes"].as<int>(),
                      false};
    if (secret.random_bytes < 1 || secret.random_bytes > 4096)
      throw std::runtime_error("secret `" + secret.name + "`: random_bytes must be 1..4096");
    const std::string encoding = optional_text(item, "encoding", "");
    if (encoding != "" && encoding != "hex")
      throw std::runtime_error("secret `" + secret.name + "`: unknown encoding `" + encoding + "`");
    secret.hex = encoding == "hex";
    plan.secrets.push_back(std::move(secret));
  }
  for (const YAML::Node& item : optional_list(root, "grants"))
    plan.grants.push_back({text_of(item, "scc"), text_of(item, "service_account")});
  const YAML::Node actions = optional_list(root, "actions");
  if (!actions) {
    plan.actions = implied_actions(plan);
    return;
  }
  for (const YAML::Node& item : actions) {
    PlanAction action{text_of(item, "action"),
                      text_of(item, "after"),
                      optional_text(item, "build_config", ""),
                      optional_text(item, "image_stream_tag", ""),
                      optional_text(item, "script", ""),
                      optional_text(item, "image", ""),
                      optional_text(item, "dockerfile", ""),
                      std::nullopt};
    if (item["runtime"]) action.runtime = optional_text(item, "runtime", "");
    if (action.action != "build" && action.action != "push" && action.action != "rollout" &&
        action.action != "complete" && action.action != "submit" && action.action != "start")
      throw std::runtime_error("unknown action `" + action.action + "`");
    if (action.action == "build" && action.build_config.empty())
      throw std::runtime_error("build action without `build_config`");
    if (action.action == "push" && (action.image.empty() || action.dockerfile.empty()))
      throw std::runtime_error("push action without `image` and `dockerfile`");
    // A Slurm env has no objects: its job is submitted after nothing.
    if (action.action == "submit") {
      if (action.script.empty() || action.script.find('/') != std::string::npos)
        throw std::runtime_error("submit action without a `script` in the env directory");
      plan.actions.push_back(std::move(action));
      continue;
    }
    // Nor has a local env: its nodes are started after nothing; a Slurm env's image is
    // pushed before its job is submitted.
    if ((action.action == "start" || action.action == "push") && action.after.empty()) {
      plan.actions.push_back(std::move(action));
      continue;
    }
    auto named = [&](const PlanObject& object) { return object.address == action.after; };
    if (std::none_of(plan.objects.begin(), plan.objects.end(), named))
      throw std::runtime_error("action `" + action.action + "` after `" + action.after +
                               "`, which is not an object of the env");
    plan.actions.push_back(std::move(action));
  }
}

// A cursor over JSON text that reads flat objects: string keys, string, number and boolean
// values.
class FlatJson {
 public:
  explicit FlatJson(std::string_view text, std::size_t at) : text_(text), at_(at) {}

  bool take(char c) {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }

  std::optional<std::string> string() {
    if (!take('"')) return std::nullopt;
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\') {
        if (++at_ >= text_.size() || text_[at_] == 'u') return std::nullopt;  // not in names
        const char escaped = text_[at_];
        out += escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
      } else {
        out += text_[at_];
      }
      ++at_;
    }
    if (at_ >= text_.size()) return std::nullopt;
    ++at_;
    return out;
  }

  // A string, or the bare token of a number or boolean.
  std::optional<std::string> value() {
    take(' ');
    if (at_ < text_.size() && text_[at_] == '"') return string();
    std::size_t begin = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) != 0 ||
                                  text_[at_] == '-' || text_[at_] == '.'))
      ++at_;
    if (begin == at_) return std::nullopt;
    return std::string(text_.substr(begin, at_ - begin));
  }

 private:
  std::string_view text_;
  std::size_t at_;
};

// One `{...}` of `objects` into `object`; false when it is not flat.
bool scan_object(FlatJson& json, PlanObject& object) {
  if (!json.take('{')) return false;
  if (json.take('}')) return true;
  do {
    std::optional<std::string> key = json.string();
    std::optional<std::string> value;
    if (!key || !json.take(':') || !(value = json.value())) return false;
    if (*key == "address") object.address = *value;
    if (*key == "kind") object.kind = *value;
    if (*key == "file") object.file = *value;
    if (*key == "admin") object.admin = *value == "true";
    if (*key == "shared") object.shared = *value == "true";
  } while (json.take(','));
  return json.take('}');
}

// Each member of a plan.json below is written with its keys in PLAN_JSON.md's order.
Value object_value(const PlanObject& o) {
  Value item = Value::map();
  item.set("address", o.address);
  item.set("api_version", o.api_version);
  item.set("kind", o.kind);
  item.set("namespace", o.namespace_);
  item.set("name", o.name);
  item.set("file", o.file);
  item.set("sha256", o.sha256);
  item.set("order", o.order);
  item.set("admin", o.admin);
  item.set("shared", o.shared);
  return item;
}

Value secret_value(const PlanSecret& s) {
  Value item = Value::map();
  item.set("name", s.name);
  item.set("key", s.key);
  item.set("random_bytes", s.random_bytes);
  if (s.hex) item.set("encoding", "hex");
  return item;
}

// An action's own fields only when it has them; `runtime` even empty (the first one found).
Value action_value(const PlanAction& a) {
  Value item = Value::map();
  item.set("action", a.action);
  item.set("after", a.after);
  auto optional = [&item](const char* key, const std::string& value) {
    if (!value.empty()) item.set(key, value);
  };
  optional("build_config", a.build_config);
  optional("image_stream_tag", a.image_stream_tag);
  optional("script", a.script);
  optional("image", a.image);
  optional("dockerfile", a.dockerfile);
  if (a.runtime) item.set("runtime", *a.runtime);
  return item;
}

Value digests_value(const std::vector<PlanDigest>& digests) {
  Value out = Value::seq();
  for (const PlanDigest& d : digests) {
    Value& item = out.push(Value::map());
    item.set("path", d.path);
    item.set("sha256", d.sha256);
  }
  return out;
}

}  // namespace

std::string write_plan_json(const PlanManifest& plan) {
  Value doc = Value::map();
  doc.set("format_version", plan.format_version);
  doc.set("compiler_version", plan.compiler_version);
  doc.set("platform", ir::platform_name(plan.platform));
  doc.set("source", plan.source);
  doc.set("cluster", plan.cluster);
  doc.set("api", plan.api);
  doc.set("env", plan.env);
  doc.set("namespace", plan.namespace_);
  doc.set("transport", plan.transport);
  doc.set("transport_note", plan.transport_note);
  doc.set("env_kind", plan.env_kind);
  // What the day-2 commands need (compiler/day2/): the ranks, whether every pod mounts the
  // same /workspace, and the ports `mlenvc port-forward` reaches in rank 0's pod.
  doc.set("nodes", plan.nodes);
  doc.set("storage", plan.shared_workspace ? "rwx" : "per_pod");
  Value& ports = doc.set("ports", Value::map());
  for (const auto& [name, port] : plan.ports) ports.set(name, port);
  doc.set("inputs_sha256", plan.inputs_sha256);
  Value& objects = doc.set("objects", Value::seq());
  for (const PlanObject& o : plan.objects) objects.push(object_value(o));
  Value& secrets = doc.set("secrets", Value::seq());
  for (const PlanSecret& s : plan.secrets) secrets.push(secret_value(s));
  Value& grants = doc.set("grants", Value::seq());
  for (const PlanGrant& g : plan.grants) {
    Value& item = grants.push(Value::map());
    item.set("scc", g.scc);
    item.set("service_account", g.service_account);
  }
  Value& actions = doc.set("actions", Value::seq());
  for (const PlanAction& a : plan.actions) actions.push(action_value(a));
  doc.set("files", digests_value(plan.files));
  return target::to_json_file(doc);
}

std::optional<std::vector<PlanObject>> scan_plan_objects(std::string_view text) {
  std::size_t at = text.find("\"objects\":");
  if (at == std::string_view::npos) return std::nullopt;
  FlatJson json(text, at + 10);
  if (!json.take('[')) return std::nullopt;
  std::vector<PlanObject> out;
  if (json.take(']')) return out;
  do {
    if (!scan_object(json, out.emplace_back())) return std::nullopt;
  } while (json.take(','));
  if (!json.take(']')) return std::nullopt;
  return out;
}

std::optional<PlanManifest> parse_plan_json(std::string_view text, std::string& error) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) throw std::runtime_error("not a JSON object");
    PlanManifest plan;
    plan.format_version = root["format_version"].as<int>();
    if (plan.format_version != 1) {
      throw std::runtime_error("unknown format_version " + std::to_string(plan.format_version));
    }
    plan.compiler_version = text_of(root, "compiler_version");
    // `target` before plans named the platform; those were all OpenShift's.
    const std::string platform =
        root["platform"] ? text_of(root, "platform") : text_of(root, "target");
    if (!platform.empty()) {
      std::optional<ir::Platform> known = ir::parse_platform(platform);
      if (!known) throw std::runtime_error("unknown platform `" + platform + "`");
      plan.platform = *known;
    }
    plan.source = text_of(root, "source");
    plan.cluster = text_of(root, "cluster");
    plan.api = optional_text(root, "api", "");
    plan.env = text_of(root, "env");
    plan.namespace_ = text_of(root, "namespace");
    plan.transport = optional_text(root, "transport", "");
    plan.transport_note = optional_text(root, "transport_note", "");
    if (root["inputs"]) plan.inputs = digests_of(root, "inputs");
    plan.inputs_sha256 = optional_text(root, "inputs_sha256", "");
    plan.files = digests_of(root, "files");
    const YAML::Node objects = root["objects"];
    if (!objects || !objects.IsSequence()) throw std::runtime_error("missing list `objects`");
    for (const YAML::Node& item : objects) {
      PlanObject object;
      object.address = text_of(item, "address");
      object.api_version = text_of(item, "api_version");
      object.kind = text_of(item, "kind");
      object.namespace_ = text_of(item, "namespace");
      object.name = text_of(item, "name");
      object.file = text_of(item, "file");
      object.sha256 = text_of(item, "sha256");
      object.order = item["order"].as<int>();
      object.admin = item["admin"].as<bool>();
      object.shared = item["shared"] && item["shared"].as<bool>();
      plan.objects.push_back(std::move(object));
    }
    std::stable_sort(plan.objects.begin(), plan.objects.end(),
                     [](const PlanObject& a, const PlanObject& b) { return a.order < b.order; });
    read_additions(root, plan);
    return plan;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string plan_json_source(std::string_view text) {
  return plan_json_string(text, "source");
}

std::string plan_json_string(std::string_view text, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\":";
  std::size_t at = text.find(quoted);
  if (at == std::string_view::npos) return {};
  std::size_t open = text.find('"', at + quoted.size());
  if (open == std::string_view::npos) return {};
  std::string out;
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[++i];
    } else if (text[i] == '"') {
      return out;
    } else {
      out += text[i];
    }
  }
  return {};
}

std::string program_inputs_path(std::string_view source) {
  return "_inputs/" + escape_file_name(source) + ".json";
}

std::optional<std::vector<PlanDigest>> parse_program_inputs(std::string_view text,
                                                            std::string& error) {
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) throw std::runtime_error("not a JSON object");
    return digests_of(root, "inputs");
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::string api_group(std::string_view api_version) {
  std::size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

}  // namespace mlenv::plan

namespace mlenv::target {
namespace {

void add_storage(DigestText& t, const char* key, const ir::Storage& s) {
  t.add(key, static_cast<long long>(s.mode));
  t.add(key, s.class_name);
  t.add(key, s.workspace.text);
  t.add(key, s.datasets.text);
  t.add(key, s.workspace_claim);
  t.add(key, s.datasets_claim);
  // Only when set: the digests of envs on their cluster's storage stay what they were.
  if (s.own) t.add(key, "own");
}

void add_cluster(DigestText& t, const ir::Cluster& c) {
  t.add("cluster", c.name);
  t.add("cluster.platform", static_cast<long long>(c.platform));
  t.add("cluster.topology", c.topology);
  if (!c.runtime.empty()) t.add("cluster.runtime", c.runtime);  // plans before it: unchanged
  t.add("cluster.slurm", {c.slurm.partition, c.slurm.account, c.slurm.qos, c.slurm.time});
  t.add("cluster.api", c.api);
  t.add("cluster.namespace", c.namespace_name);
  t.add("cluster.nodes", c.nodes);
  t.add("cluster.gpus", static_cast<long long>(c.gpus.per_node));
  t.add("cluster.gpus", c.gpus.resource);
  t.add("cluster.gpus", c.gpus.product);
  add_storage(t, "cluster.storage", c.storage);
  for (const auto& [name, access] : c.classes)
    t.add("cluster.class", name + "=" + std::to_string(static_cast<int>(access)));
  t.add("cluster.tcp_interfaces", c.network.tcp_interfaces);
  if (c.network.rdma) {
    const ir::Rdma& rdma = *c.network.rdma;
    t.add("rdma.gid_index", rdma.gid_index.value_or(-1));
    t.add("rdma.gdr_level", rdma.gdr_level.value_or("-"));
    for (const ir::Rail& r : rdma.rails) {
      t.add("rail", {r.device, r.interface, std::to_string(static_cast<int>(r.link_layer)),
                     r.network, r.resource, std::to_string(static_cast<int>(r.attachment))});
      if (r.ipam) t.add("rail.ipam", {r.ipam->type, r.ipam->range});
      if (r.ipam) t.add("rail.ipam.exclude", r.ipam->exclude);
    }
  }
  t.add("security",
        {c.security.service_account, c.security.scc, c.security.unlimited_memlock ? "1" : "0"});
}

void add_image(DigestText& t, const ir::Image& i) {
  t.add("image", {i.name, i.from, i.tag, i.registry});
  t.add("image.apt", i.apt);
  t.add("image.pip", i.pip);
  t.add("image.tools", i.tools);
  for (const auto& [key, value] : i.env) t.add("image.env", {key, value});
  t.add("image.run", i.run);
}

std::string env_text(const ir::Env& e) {
  DigestText t;
  t.add("env", e.name);
  t.add("kind", static_cast<long long>(e.kind));
  add_cluster(t, e.cluster);
  add_image(t, e.image);
  t.add("shape",
        {std::to_string(e.nodes), std::to_string(e.gpus), std::to_string(e.nproc_per_node)});
  t.add("transport", {std::to_string(static_cast<int>(e.transport)), e.transport_auto ? "auto" : "",
                      e.transport_note});
  for (ir::Service s : e.services) t.add("service", static_cast<long long>(s));
  t.add("auth", static_cast<long long>(e.auth));
  t.add("debug", e.debug ? 1 : 0);
  t.add("command", e.command);
  t.add("launcher", e.launcher);
  std::vector<std::string> acceptance = {std::to_string(e.acceptance.min_busbw_gbps),
                                         std::to_string(e.acceptance.max_bytes)};
  if (e.acceptance.diagnose) acceptance.push_back("diagnose");  // unchanged fingerprint without
  t.add("acceptance", acceptance);
  t.add("restarts", e.restarts);
  t.add("ttl_seconds", e.ttl_seconds.value_or(-1));
  t.add("resources", {e.resources.cpu.text, e.resources.memory.text, e.resources.shm.text});
  add_storage(t, "storage", e.storage);
  t.add("protect", e.protect ? 1 : 0);
  for (const auto& [key, value] : e.labels) t.add("label", {key, value});
  t.add("ports", {std::to_string(e.master_port), std::to_string(e.rdzv_port)});
  // Then the fields only one platform reads, which its provider names: every provider's, in
  // registry order, so that a digest does not depend on the env's platform.
  for (const target::Provider* provider : target::providers())
    provider->add_own_digest_fields(e, t);
  return t.text();
}

}  // namespace

void DigestText::add(const char* key, const std::string& value) {
  text_ += key;
  text_ += '=';
  text_ += std::to_string(value.size());  // length-prefixed: no value can fake a key
  text_ += ':';
  text_ += value;
  text_ += '\n';
}

void DigestText::add(const char* key, const std::vector<std::string>& values) {
  add(key, static_cast<long long>(values.size()));
  for (const std::string& value : values) add(key, value);
}

std::string env_inputs_sha256(const ir::Env& env, ir::Platform platform,
                              const std::vector<PlannedObject>& objects,
                              const std::vector<PlannedFile>& files) {
  DigestText rendered;  // what the render made of it: no field the IR text misses goes unseen
  for (const PlannedObject& o : objects) rendered.add("object", {o.file, o.sha256});
  for (const PlannedFile& f : files) rendered.add("file", {f.path, f.sha256});
  return sha256_hex(std::string(kCompilerVersion) + "\n" + ir::platform_name(platform) + "\n" +
                    env_text(env) + rendered.text());
}

Value plan_inputs(const std::vector<ir::InputFile>& files) {
  std::vector<const ir::InputFile*> sorted;
  for (const ir::InputFile& f : files) sorted.push_back(&f);
  std::sort(sorted.begin(), sorted.end(),
            [](const ir::InputFile* a, const ir::InputFile* b) { return a->path < b->path; });
  Value out = Value::seq();
  for (const ir::InputFile* f : sorted) {
    Value& item = out.push(Value::map());
    item.set("path", f->path);
    item.set("sha256", sha256_hex(f->text));
    if (!f->commit.empty()) item.set("commit", f->commit);  // a git import's resolved commit
  }
  return out;
}

File program_inputs_file(const PlanContext& context) {
  Value doc = Value::map();
  doc.set("format_version", 1);
  doc.set("compiler_version", kCompilerVersion);
  doc.set("source", context.source);
  doc.set("inputs", context.inputs);
  return {plan::program_inputs_path(context.source), to_json_file(doc)};
}

void add_job_token_secret(PlanActions& steps, const EnvLayout& layout) {
  steps.secrets.push_back({layout.job_token_secret, "token", 32, true});
}

plan::PlanManifest plan_manifest(const EnvLayout& layout, const PlanContext& context,
                                 const std::vector<PlannedObject>& objects,
                                 const std::vector<PlannedFile>& files, const PlanActions& steps) {
  const ir::Env& env = *layout.env;
  plan::PlanManifest plan;
  plan.compiler_version = kCompilerVersion;
  plan.platform = context.platform;
  plan.source = context.source;
  plan.cluster = layout.cluster;
  plan.api = env.cluster.api;
  plan.env = env.name;
  plan.namespace_ = layout.namespace_name;
  plan.transport = env.transport == ir::Transport::rdma ? "rdma" : "tcp";
  plan.transport_note = env.transport_note;
  plan.env_kind = env.kind == ir::EnvKind::dev   ? "dev"
                  : env.kind == ir::EnvKind::run ? "run"
                                                 : "acceptance";
  plan.nodes = env.nodes;
  plan.shared_workspace = env.storage.mode == ir::StorageMode::rwx;
  if (env.debug) plan.ports.emplace_back("debugpy", kDebugpyPort);
  for (const ExposedService& service : layout.services)
    plan.ports.emplace_back(service.name, service.app_port);
  plan.inputs_sha256 = env_inputs_sha256(env, context.platform, objects, files);
  for (const PlannedObject& p : objects) {
    const Object& o = *p.object;
    plan.objects.push_back({o.address(), o.api_version, o.kind, o.namespace_name, o.name, p.file,
                            p.sha256, static_cast<int>(o.order), o.admin, o.shared});
  }
  plan.secrets = steps.secrets;
  plan.grants = steps.grants;
  plan.actions = steps.actions;
  for (const PlannedFile& f : files) plan.files.push_back({f.path, f.sha256});
  return plan;
}

std::string plan_json(const EnvLayout& layout, const PlanContext& context,
                      const std::vector<PlannedObject>& objects,
                      const std::vector<PlannedFile>& files, const PlanActions& steps) {
  return plan::write_plan_json(plan_manifest(layout, context, objects, files, steps));
}

}  // namespace mlenv::target
