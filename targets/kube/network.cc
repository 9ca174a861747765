#include "targets/common/json_writer.h"
#include "targets/common/yaml_writer.h"
#include "targets/kube/builders.h"

namespace mlenv::target::kube {
namespace {

// The rails whose attachments the env's pods use; none for a TCP env.
const std::vector<ir::Rail>* attached_rails(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  if (env.transport != ir::Transport::rdma || !env.cluster.network.rdma) return nullptr;
  return &env.cluster.network.rdma->rails;
}

}  // namespace

std::vector<Object> network_attachments(const EnvLayout& layout) {
  std::vector<Object> out;
  const auto* rails = attached_rails(layout);
  if (!rails) return out;
  for (const ir::Rail& rail : *rails) {
    if (rail.network.empty() || rail.attachment == ir::Attachment::existing) continue;
    Object o = make_object("k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", rail.network,
                           layout.namespace_name, layout.shared_labels,
                           {{"k8s.v1.cni.cncf.io/resourceName", rail.resource}});
    o.order = ApplyOrder::Network;
    o.shared = true;
    Value config = Value::map();
    config.set("cniVersion", "0.3.1");
    config.set("name", rail.network);
    // RoCE VFs are Ethernet netdevs for the SR-IOV CNI; InfiniBand VFs need its IB sibling
    // (k8snetworkplumbingwg/ib-sriov-cni), which sets the VF's GUID instead of a MAC.
    const bool infiniband = rail.link_layer == ir::LinkLayer::infiniband;
    config.set("type", infiniband ? "ib-sriov" : "sriov");
    config.set("link_state", "enable");
    Value& ipam = config.set("ipam", Value::map());
    if (rail.ipam) {
      ipam.set("type", rail.ipam->type);
      if (!rail.ipam->range.empty()) ipam.set("range", rail.ipam->range);
      if (!rail.ipam->exclude.empty()) ipam.set("exclude", Value::strings(rail.ipam->exclude));
    }
    o.body.set("spec", Value::map()).set("config", to_json_compact(config));
    out.push_back(std::move(o));
  }
  return out;
}

void SharedObjectsCheck::add(const EnvLayout& layout, Diagnostics& diagnostics) {
  add_attachments(layout, diagnostics);
  add_claims(layout, diagnostics);
}

void SharedObjectsCheck::add_claims(const EnvLayout& layout, Diagnostics& diagnostics) {
  const ir::Env& env = *layout.env;
  if (!env.storage.own &&
      !claims_added_.insert(env.cluster.api + " " + layout.namespace_name + " " + env.cluster.name)
           .second)
    return;
  for (const Object& o : rwx_claims(layout)) {
    shared_.add(layout, o.address(), to_yaml(o.body), diagnostics);
  }
}

void SharedObjectsCheck::add_attachments(const EnvLayout& layout, Diagnostics& diagnostics) {
  const std::vector<ir::Rail>* rails = attached_rails(layout);
  if (!rails) return;
  auto& added = added_[layout.env->cluster.api + " " + layout.namespace_name];
  for (const std::vector<ir::Rail>* other : added) {
    if (*other == *rails) return;  // the same objects, byte for byte
  }
  added.push_back(rails);
  for (const Object& o : network_attachments(layout)) {
    shared_.add(layout, o.address(), to_yaml(o.body), diagnostics);
  }
}

std::string networks_annotation(const EnvLayout& layout) {
  const auto* rails = attached_rails(layout);
  if (!rails) return "";
  Value list = Value::seq();
  for (const ir::Rail& rail : *rails) {
    if (rail.network.empty()) continue;
    Value& item = list.push(Value::map());
    item.set("name", rail.network);
    item.set("interface", rail.interface);
  }
  return list.size() == 0 ? "" : to_json_compact(list);
}

std::map<std::string, int> rail_resources(const EnvLayout& layout) {
  std::map<std::string, int> out;
  const auto* rails = attached_rails(layout);
  if (!rails) return out;
  for (const ir::Rail& rail : *rails) {
    if (!rail.resource.empty()) ++out[rail.resource];
  }
  return out;
}

Object network_policy(const EnvLayout& layout, Value ingress_peer) {
  Object o = make_object("networking.k8s.io/v1", "NetworkPolicy", layout.workload,
                         layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Policy;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("podSelector", Value::map()).set("matchLabels", string_map(layout.selector));
  spec.set("policyTypes", Value::strings({"Ingress"}));
  Value& ingress = spec.set("ingress", Value::seq());
  if (!layout.services.empty() && ingress_peer.kind() != Value::Kind::Null) {
    Value& from_router = ingress.push(Value::map());
    from_router.set("from", Value::seq()).push(std::move(ingress_peer));
    Value& ports = from_router.set("ports", Value::seq());
    for (const ExposedService& s : layout.services) {
      Value& p = ports.push(Value::map());
      p.set("protocol", "TCP");
      p.set("port", s.proxy_port);
    }
  }
  // NCCL, rendezvous and the trainer's own ports: only between the env's pods.
  Value& peers = ingress.push(Value::map());
  peers.set("from", Value::seq())
      .push(Value::map())
      .set("podSelector", Value::map())
      .set("matchLabels", string_map(layout.selector));
  return o;
}

}  // namespace mlenv::target::kube
