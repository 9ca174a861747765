#include "localise.h"

#include <poll.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "exit_code.h"
#include "log.h"
#include "signals.h"

namespace boot {
namespace {

constexpr const char* kNodeCheck =
    "NVLink/NVSwitch and GPUs of this node: nvidia-smi nvlink -s, nvidia-smi topo -m, "
    "dcgmi diag -r 2, GPU clocks and PCIe link width";
constexpr const char* kNetworkCheck =
    "this node's network: every HCA's port state and rate (ibstat), cables, PCIe width of the "
    "HCAs, GPUDirect RDMA (nvidia_peermem)";
constexpr const char* kRailCheck =
    "this HCA: ibstat port state and rate, the cable and switch port of this rail, "
    "perfquery error counters; a rail much slower than the others may run over TCP";
constexpr const char* kLinkCheck =
    "the path between these two nodes: the cables and switch ports between them, the leaf or "
    "spine switch they share, its error counters";

bool slow(double figure, const std::string& error, double expected) {
  return !error.empty() || figure < kSlowFraction * expected;
}

Json integer(int value) {
  return Json(static_cast<std::int64_t>(value));
}

// Everything a step message carries for one node.
Json step_message(int id, const StepSpec& spec) {
  Json nodes = Json::array();
  for (int node : spec.nodes) nodes.push(integer(node));
  Json out = Json::object();
  out.set("t", "step")
      .set("id", id)
      .set("kind", spec.kind)
      .set("group", spec.group)
      .set("nodes", std::move(nodes))
      .set("rail", spec.rail)
      .set("bytes", static_cast<std::int64_t>(spec.bytes))
      .set("timeout_s", spec.timeout_s)
      .set("unique_id", spec.unique_id);
  return out;
}

StepSpec step_from_message(const Json& message) {
  StepSpec spec;
  auto text = [&](const char* key) {
    const Json* value = message.find(key);
    return value && value->is_string() ? value->as_string() : std::string();
  };
  auto number = [&](const char* key, double fallback) {
    const Json* value = message.find(key);
    return value && value->is_number() ? value->as_number() : fallback;
  };
  spec.kind = text("kind");
  spec.unique_id = text("unique_id");
  spec.group = static_cast<int>(number("group", -1));
  spec.rail = static_cast<int>(number("rail", -1));
  spec.bytes = static_cast<std::uint64_t>(number("bytes", 0));
  spec.timeout_s = number("timeout_s", 60);
  if (const Json* nodes = message.find("nodes"); nodes && nodes->is_array()) {
    for (const Json& node : nodes->as_array()) {
      if (node.is_integer()) spec.nodes.push_back(static_cast<int>(node.as_int()));
    }
  }
  return spec;
}

Json figure_message(int id, const StepFigure& figure) {
  Json out = Json::object();
  out.set("t", "figure")
      .set("id", id)
      .set("busbw_gbps", figure.busbw_gbps)
      .set("error", figure.error)
      .set("hca", figure.hca);
  return out;
}

StepFigure figure_from_message(const Json& message) {
  StepFigure figure;
  if (const Json* busbw = message.find("busbw_gbps"); busbw && busbw->is_number())
    figure.busbw_gbps = busbw->as_number();
  if (const Json* error = message.find("error"); error && error->is_string())
    figure.error = error->as_string();
  if (const Json* hca = message.find("hca"); hca && hca->is_string()) figure.hca = hca->as_string();
  return figure;
}

int id_of(const Json& message) {
  const Json* id = message.find("id");
  return id && id->is_integer() ? static_cast<int>(id->as_int()) : -1;
}

std::string type_of(const Json& message) {
  const Json* type = message.find("t");
  return type && type->is_string() ? type->as_string() : "";
}

// Rank 0's side of the steps: sends each node its part, runs its own, gathers the figures.
class StepRunner {
 public:
  // `collective` may be null for a runner that only awaits the members.
  StepRunner(Collective* collective, NodeLinks& links, int nnodes, double step_timeout_s)
      : collective_(collective), links_(links), nnodes_(nnodes), timeout_s_(step_timeout_s) {}

  // figures[node], nullopt for a node that died or stayed silent (then added to lost()).
  std::vector<std::optional<StepFigure>> run(const std::vector<StepSpec>& specs) {
    int id = ++last_id_;
    std::vector<std::optional<StepFigure>> figures(static_cast<size_t>(nnodes_));
    for (int node = 1; node < nnodes_; ++node) {
      LineConnection* member = connection(node);
      if (member && !member->send(step_message(id, specs[static_cast<size_t>(node)]))) {
        lose(node, "could not be sent the step");
      }
    }
    figures[0] = collective_->step(specs[0]);
    gather(id, figures);
    return figures;
  }

  // Waits for every member's "ready" (sent after its sweep, so it has taken the plan and no step
  // can be lost in the rendezvous' buffer) for up to wait_s.
  void await_ready(double wait_s) {
    std::vector<std::optional<StepFigure>> ready(static_cast<size_t>(nnodes_));
    gather(0, ready, wait_s, "ready");
  }

  bool any_lost() const { return !lost_.empty(); }
  const std::map<int, std::string>& lost() const { return lost_; }
  double timeout_s() const { return timeout_s_; }

 private:
  LineConnection* connection(int node) {
    if (lost_.count(node)) return nullptr;
    return links_.members[static_cast<size_t>(node)].get();
  }

  void lose(int node, const std::string& why) {
    lost_.emplace(node, why);
    links_.members[static_cast<size_t>(node)].reset();
  }

  // Waits for every member's figure until the step's deadline plus a grace for the message.
  void gather(int id, std::vector<std::optional<StepFigure>>& figures) {
    gather(id, figures, timeout_s_ + 5.0, "figure");
  }

  void gather(int id, std::vector<std::optional<StepFigure>>& figures, double wait_s,
              const std::string& type) {
    Clock::time_point deadline = time_after(Clock::now(), wait_s);
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<int> waiting;
      for (int node = 1; node < nnodes_; ++node) {
        LineConnection* member = connection(node);
        if (member && !figures[static_cast<size_t>(node)]) {
          fds.push_back({member->fd(), POLLIN, 0});
          waiting.push_back(node);
        }
      }
      if (waiting.empty()) return;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        for (int node : waiting) lose(node, "sent no " + type + " before the deadline");
        return;
      }
      int ready = ::poll(fds.data(), fds.size(),
                         static_cast<int>(std::min<long long>(left.count() + 1, 1000)));
      if (ready < 0 && errno != EINTR) throw BootError(kExitSystemError, "poll failed");
      throw_if_terminated();
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        int node = waiting[i];
        std::vector<Json> messages;
        bool open = connection(node)->receive(messages);
        for (const Json& message : messages) {
          if (type_of(message) == type && id_of(message) == id) {
            figures[static_cast<size_t>(node)] = figure_from_message(message);
          }
        }
        if (!open && !figures[static_cast<size_t>(node)]) lose(node, "closed its connection");
        if (!open) links_.members[static_cast<size_t>(node)].reset();
      }
    }
  }

  Collective* collective_;
  NodeLinks& links_;
  int nnodes_;
  double timeout_s_;
  int last_id_ = 0;
  std::map<int, std::string> lost_;
};

std::vector<StepSpec> idle_specs(int nnodes, const std::string& kind, std::uint64_t bytes,
                                 double timeout_s) {
  StepSpec idle;
  idle.kind = kind;
  idle.bytes = bytes;
  idle.timeout_s = timeout_s;
  return std::vector<StepSpec>(static_cast<size_t>(nnodes), idle);
}

// Times one step and records it under `name`.
template <typename Run>
void timed(Localisation& out, const std::string& name, Run run) {
  Clock::time_point start = Clock::now();
  run();
  out.steps.push_back({name, std::chrono::duration<double>(Clock::now() - start).count()});
}

std::string figure_error(const std::optional<StepFigure>& figure) {
  return figure ? figure->error : "no figure: the node was lost";
}

// Every node over its own GPUs, all at once.
void node_step(Localisation& out, StepRunner& runner, int nnodes, std::uint64_t bytes) {
  std::vector<StepSpec> specs = idle_specs(nnodes, "node", bytes, runner.timeout_s());
  for (int node = 0; node < nnodes; ++node) {
    specs[static_cast<size_t>(node)].group = node;
    specs[static_cast<size_t>(node)].nodes = {node};
  }
  auto figures = runner.run(specs);
  for (int node = 0; node < nnodes; ++node) {
    const auto& figure = figures[static_cast<size_t>(node)];
    if (runner.lost().count(node)) continue;
    out.nodes.push_back({node, figure ? figure->busbw_gbps : 0, figure_error(figure)});
  }
}

// One round of pairings, all pairs at once; a pair's figure is its lower end's.
void pair_step(Localisation& out, StepRunner& runner, int nnodes, std::uint64_t bytes, int round,
               const std::vector<std::pair<int, int>>& pairs) {
  std::vector<StepSpec> specs = idle_specs(nnodes, "pair", bytes, runner.timeout_s());
  for (size_t group = 0; group < pairs.size(); ++group) {
    for (int node : {pairs[group].first, pairs[group].second}) {
      specs[static_cast<size_t>(node)].group = static_cast<int>(group);
      specs[static_cast<size_t>(node)].nodes = {std::min(pairs[group].first, pairs[group].second),
                                                std::max(pairs[group].first, pairs[group].second)};
    }
  }
  auto figures = runner.run(specs);
  for (const auto& [a, b] : pairs) {
    if (runner.lost().count(a) || runner.lost().count(b)) continue;
    const auto& first = figures[static_cast<size_t>(a)];
    const auto& second = figures[static_cast<size_t>(b)];
    PairRow row{round, a, b, 0, ""};
    row.error = !figure_error(first).empty() ? figure_error(first) : figure_error(second);
    if (row.error.empty()) row.busbw_gbps = std::min(first->busbw_gbps, second->busbw_gbps);
    out.pairs.push_back(row);
  }
}

// A good partner for each suspect: one of its own partners first, never another suspect, each
// partner once; a suspect with none is tested with another suspect (then the row is a link).
std::vector<std::pair<int, int>> rail_groups(const std::vector<int>& suspects,
                                             const std::vector<PairRow>& pairs, int nnodes) {
  std::set<int> busy(suspects.begin(), suspects.end());
  std::vector<std::pair<int, int>> groups;
  std::set<int> placed;
  for (int suspect : suspects) {
    if (placed.count(suspect)) continue;
    int partner = -1;
    for (const PairRow& row : pairs) {
      int other = row.a == suspect ? row.b : row.b == suspect ? row.a : -1;
      if (other >= 0 && !busy.count(other)) {
        partner = other;
        break;
      }
    }
    for (int node = 0; node < nnodes && partner < 0; ++node) {
      if (!busy.count(node)) partner = node;
    }
    for (int node : suspects) {
      if (partner < 0 && node != suspect && !placed.count(node)) partner = node;
    }
    if (partner < 0) continue;
    busy.insert(partner);
    placed.insert(suspect);
    placed.insert(partner);
    groups.push_back({suspect, partner});
  }
  return groups;
}

// The suspects' pair test once per HCA, all suspects at once, one HCA per step.
void rail_steps(Localisation& out, StepRunner& runner, Collective& collective, int nnodes,
                std::uint64_t bytes, const std::vector<std::pair<int, int>>& groups) {
  size_t rails = collective.rails().size();
  for (size_t rail = 0; rail < rails && !runner.any_lost(); ++rail) {
    std::vector<StepSpec> specs = idle_specs(nnodes, "rail", bytes, runner.timeout_s());
    for (size_t group = 0; group < groups.size(); ++group) {
      auto [suspect, partner] = groups[group];
      std::string id = collective.group_id();
      for (int node : {suspect, partner}) {
        specs[static_cast<size_t>(node)].unique_id = id;
        StepSpec& spec = specs[static_cast<size_t>(node)];
        spec.group = static_cast<int>(group);
        spec.nodes = {std::min(suspect, partner), std::max(suspect, partner)};
        spec.rail = static_cast<int>(rail);
      }
    }
    std::vector<std::optional<StepFigure>> figures;
    timed(out, "rail " + std::to_string(rail), [&] { figures = runner.run(specs); });
    for (auto [suspect, partner] : groups) {
      if (runner.lost().count(suspect) || runner.lost().count(partner)) continue;
      const auto& mine = figures[static_cast<size_t>(suspect)];
      const auto& theirs = figures[static_cast<size_t>(partner)];
      RailRow row{suspect, partner, mine ? mine->hca : "", 0, ""};
      row.error = !figure_error(mine).empty() ? figure_error(mine) : figure_error(theirs);
      if (mine && theirs) row.busbw_gbps = std::min(mine->busbw_gbps, theirs->busbw_gbps);
      out.rails.push_back(row);
    }
  }
}

std::vector<Suspect> lost_suspects(const std::map<int, std::string>& lost,
                                   const std::string& step) {
  std::vector<Suspect> out;
  for (const auto& [node, why] : lost) {
    out.push_back({node, -1, "", "lost during the " + step + " step: " + why, 0, 0,
                   "whether the node is up: its kubelet or slurmd, dmesg (Xid, ECC, kernel "
                   "panic), the pod's events"});
  }
  return out;
}

}  // namespace

std::vector<std::vector<std::pair<int, int>>> pair_rounds(int nnodes) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (nnodes < 2) return rounds;
  if (nnodes == 2) return {{{0, 1}}};
  std::vector<std::pair<int, int>> first, second, third;
  for (int i = 0; i + 1 < nnodes; i += 2) first.push_back({i, i + 1});
  for (int i = 1; i + 1 < nnodes; i += 2) second.push_back({i, i + 1});
  // The ring's closing edge (n-1, 0): in the second round when n is even (both ends are free
  // there), in a third of its own when n is odd.
  (nnodes % 2 == 0 ? second : third).push_back({nnodes - 1, 0});
  rounds.push_back(first);
  rounds.push_back(second);
  if (!third.empty()) rounds.push_back(third);
  return rounds;
}

double typical(std::vector<double> figures) {
  if (figures.empty()) return 0;
  std::sort(figures.begin(), figures.end());
  return figures[static_cast<size_t>(std::lround(static_cast<double>(figures.size() - 1) * 0.75))];
}

std::vector<Suspect> judge_nodes(const std::vector<NodeRow>& rows) {
  std::vector<double> figures;
  for (const NodeRow& row : rows) {
    if (row.error.empty()) figures.push_back(row.busbw_gbps);
  }
  double expected = typical(figures);
  std::vector<Suspect> out;
  for (const NodeRow& row : rows) {
    if (!slow(row.busbw_gbps, row.error, expected)) continue;
    std::string reason = row.error.empty() ? "all-reduce over its own GPUs far below the others'"
                                           : "all-reduce over its own GPUs failed: " + row.error;
    out.push_back({row.node, -1, "", reason, row.busbw_gbps, expected, kNodeCheck});
  }
  return out;
}

PairVerdict judge_pairs(const std::vector<PairRow>& rows, const std::vector<int>& named) {
  std::vector<double> figures;
  for (const PairRow& row : rows) {
    if (row.error.empty()) figures.push_back(row.busbw_gbps);
  }
  PairVerdict out;
  out.expected_gbps = typical(figures);
  std::map<int, int> seen, slow_with;
  for (const PairRow& row : rows) {
    bool is_slow = slow(row.busbw_gbps, row.error, out.expected_gbps);
    for (int node : {row.a, row.b}) {
      ++seen[node];
      slow_with[node] += is_slow;
    }
  }
  std::set<int> suspects(named.begin(), named.end());
  for (const auto& [node, count] : seen) {
    if (count >= 2 && slow_with[node] == count && !suspects.count(node)) {
      out.network_suspects.push_back(node);
    }
  }
  suspects.insert(out.network_suspects.begin(), out.network_suspects.end());
  for (const PairRow& row : rows) {
    if (suspects.count(row.a) || suspects.count(row.b)) continue;
    if (seen[row.a] < 2 && seen[row.b] < 2) {
      // Two nodes that only met each other (a job of two) have no other pair to compare with:
      // their rails are compared with each other instead.
      out.unjudged.push_back(row.a);
      out.unjudged.push_back(row.b);
      continue;
    }
    if (!slow(row.busbw_gbps, row.error, out.expected_gbps)) continue;
    std::string reason = row.error.empty() ? "slow only together, fine with their other partners"
                                           : "failed only together: " + row.error;
    out.links.push_back({row.a, row.b, "", reason, row.busbw_gbps, out.expected_gbps, kLinkCheck});
  }
  return out;
}

std::vector<Suspect> judge_rails(const std::vector<RailRow>& rows, const PairVerdict& verdict,
                                 const std::vector<PairRow>& pairs) {
  const std::vector<int>& network_suspects = verdict.network_suspects;
  double pair_expected = verdict.expected_gbps;
  std::vector<double> figures;
  for (const RailRow& row : rows) {
    if (row.error.empty()) figures.push_back(row.busbw_gbps);
  }
  double expected = typical(figures);
  std::set<int> suspects(network_suspects.begin(), network_suspects.end());
  suspects.insert(verdict.unjudged.begin(), verdict.unjudged.end());
  std::vector<Suspect> out;
  std::set<int> explained;
  for (const RailRow& row : rows) {
    if (!slow(row.busbw_gbps, row.error, expected)) continue;
    // The partner is a suspect too only when no good node was left to pair with: then this rail
    // is known to be bad between the two, not at which end.
    bool both = suspects.count(row.partner) > 0;
    std::string reason = row.error.empty() ? "rail far below the other rails"
                                           : "rail down or unusable: " + row.error;
    out.push_back(
        {row.node, both ? row.partner : -1, row.hca, reason, row.busbw_gbps, expected, kRailCheck});
    explained.insert(row.node);
    if (both) explained.insert(row.partner);
  }
  for (int node : network_suspects) {
    if (explained.count(node)) continue;
    bool tested =
        std::any_of(rows.begin(), rows.end(), [&](const RailRow& row) { return row.node == node; });
    double worst = pair_expected;
    for (const PairRow& row : pairs) {
      if (row.a == node || row.b == node) worst = std::min(worst, row.busbw_gbps);
    }
    out.push_back(
        {node, -1, "",
         tested ? "slow with every partner, on every rail alike" : "slow with every partner", worst,
         pair_expected, kNetworkCheck});
  }
  return out;
}

std::vector<Suspect> await_members(NodeLinks& links, int nnodes, double wait_s) {
  StepRunner runner(nullptr, links, nnodes, 0);
  runner.await_ready(wait_s);
  return lost_suspects(runner.lost(), "sweep");
}

Localisation localise(Collective& collective, NodeLinks& links, int nnodes, std::uint64_t bytes,
                      double step_timeout_s) {
  Localisation out;
  out.ran = true;
  StepRunner runner(&collective, links, nnodes, step_timeout_s);
  auto stop_if_lost = [&](const std::string& step) {
    if (!runner.any_lost()) return false;
    out.suspects = lost_suspects(runner.lost(), step);
    log_error("localisation stopped: " + std::to_string(runner.lost().size()) +
              " node(s) lost during the " + step + " step");
    return true;
  };
  log_info("localisation: per node");
  timed(out, "node", [&] { node_step(out, runner, nnodes, bytes); });
  if (stop_if_lost("node")) return out;
  std::vector<Suspect> named = judge_nodes(out.nodes);
  std::vector<int> named_nodes;
  for (const Suspect& suspect : named) named_nodes.push_back(suspect.node);

  auto rounds = pair_rounds(nnodes);
  for (size_t round = 0; round < rounds.size(); ++round) {
    log_info("localisation: pairs, round " + std::to_string(round + 1));
    timed(out, "pairs " + std::to_string(round + 1), [&] {
      pair_step(out, runner, nnodes, bytes, static_cast<int>(round + 1), rounds[round]);
    });
    if (stop_if_lost("pairs")) return out;
  }
  PairVerdict pairs = judge_pairs(out.pairs, named_nodes);
  std::vector<int> tested = pairs.network_suspects;
  tested.insert(tested.end(), pairs.unjudged.begin(), pairs.unjudged.end());
  std::vector<std::pair<int, int>> groups = rail_groups(tested, out.pairs, nnodes);
  if (!groups.empty()) {
    log_info("localisation: rails of " + std::to_string(groups.size()) + " suspect(s)");
    rail_steps(out, runner, collective, nnodes, bytes, groups);
    if (stop_if_lost("rail")) return out;
  }
  out.suspects = named;
  for (Suspect& link : pairs.links) out.suspects.push_back(std::move(link));
  for (Suspect& rail : judge_rails(out.rails, pairs, out.pairs)) {
    out.suspects.push_back(std::move(rail));
  }
  return out;
}

void end_steps(NodeLinks& links, int code) {
  Json message = Json::object();
  message.set("t", "steps_end").set("code", code);
  for (auto& member : links.members) {
    if (member) member->send(message);
  }
}

int follow_steps(Collective& collective, LineConnection& rank0, double wait_s) {
  Json ready = Json::object();
  ready.set("t", "ready").set("id", 0);
  if (!rank0.send(ready)) throw BootError(kExitPeerLost, "peer lost: rank 0 cannot be reached");
  Clock::time_point deadline = time_after(Clock::now(), wait_s);
  for (;;) {
    pollfd fd{rank0.fd(), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      throw BootError(kExitPeerLost, "peer lost: rank 0 sent no step of the self-test for " +
                                         std::to_string(static_cast<int>(wait_s)) + " s");
    }
    int ready = ::poll(&fd, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1000)));
    if (ready < 0 && errno != EINTR) throw BootError(kExitSystemError, "poll failed");
    throw_if_terminated();
    if (ready <= 0) continue;
    std::vector<Json> messages;
    bool open = rank0.receive(messages);
    for (const Json& message : messages) {
      std::string type = type_of(message);
      if (type == "steps_end") {
        const Json* code = message.find("code");
        return code && code->is_integer() ? static_cast<int>(code->as_int()) : 1;
      }
      if (type == "abort") {
        const Json* code = message.find("code");
        throw BootError(code && code->is_integer() ? static_cast<int>(code->as_int()) : 1,
                        "stopped by rank 0 during the self-test");
      }
      if (type != "step") continue;
      StepFigure figure = collective.step(step_from_message(message));
      if (!rank0.send(figure_message(id_of(message), figure))) {
        throw BootError(kExitPeerLost, "peer lost: rank 0 cannot be reached");
      }
      deadline = time_after(Clock::now(), wait_s);
    }
    if (!open) {
      throw BootError(kExitPeerLost, "peer lost: rank 0 closed the control connection");
    }
  }
}

Json localisation_to_json(const Localisation& localisation) {
  Json nodes = Json::array();
  for (const NodeRow& row : localisation.nodes) {
    Json entry = Json::object();
    entry.set("node", row.node).set("busbw_gbps", row.busbw_gbps).set("error", row.error);
    nodes.push(std::move(entry));
  }
  Json pairs = Json::array();
  for (const PairRow& row : localisation.pairs) {
    Json ends = Json::array();
    ends.push(integer(row.a)).push(integer(row.b));
    Json entry = Json::object();
    entry.set("round", row.round)
        .set("nodes", std::move(ends))
        .set("busbw_gbps", row.busbw_gbps)
        .set("error", row.error);
    pairs.push(std::move(entry));
  }
  Json rails = Json::array();
  for (const RailRow& row : localisation.rails) {
    Json entry = Json::object();
    entry.set("node", row.node)
        .set("partner", row.partner)
        .set("hca", row.hca)
        .set("busbw_gbps", row.busbw_gbps)
        .set("error", row.error);
    rails.push(std::move(entry));
  }
  Json steps = Json::array();
  for (const StepTime& step : localisation.steps) {
    Json entry = Json::object();
    entry.set("step", step.step).set("seconds", step.seconds);
    steps.push(std::move(entry));
  }
  Json suspects = Json::array();
  for (const Suspect& suspect : localisation.suspects) {
    Json entry = Json::object();
    entry.set("node", suspect.node)
        .set("partner", suspect.partner >= 0 ? Json(integer(suspect.partner)) : Json(nullptr))
        .set("rail", suspect.rail)
        .set("reason", suspect.reason)
        .set("measured_gbps", suspect.measured_gbps)
        .set("expected_gbps", suspect.expected_gbps)
        .set("check", suspect.check);
    suspects.push(std::move(entry));
  }
  Json out = Json::object();
  out.set("localised", localisation.ran)
      .set("nodes", std::move(nodes))
      .set("pairs", std::move(pairs))
      .set("rails", std::move(rails))
      .set("steps", std::move(steps))
      .set("suspects", std::move(suspects));
  return out;
}

}  // namespace boot
