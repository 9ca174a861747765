// The simulated collective: figures computed from a model of the cluster instead of measured, so
// the whole localisation (rendezvous, control channel, steps, verdict) runs without a GPU. The
// model and its arithmetic are documented in runtime/README.md ("The simulated cluster").

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "collective.h"
#include "exit_code.h"
#include "nccl_check.h"
#include "signals.h"

namespace boot {
namespace {

[[noreturn]] void bad_model(const std::string& why) {
  throw BootError(kExitConfigError, std::string(kSimulateVariable) + ": " + why);
}

double number_or(const Json& json, const char* key, double fallback) {
  const Json* value = json.find(key);
  if (!value) return fallback;
  if (!value->is_number()) bad_model(std::string("`") + key + "` must be a number");
  return value->as_number();
}

int node_of(const Json& fault, const char* key = "node") {
  const Json* node = fault.find(key);
  return node && node->is_integer() ? static_cast<int>(node->as_int()) : -1;
}

// The cluster as the model describes it, with its faults applied.
struct Cluster {
  int nnodes = 1;
  double nvlink_gbps = 360;
  double rail_gbps = 25;
  double step_s = 0.01;
  std::vector<std::string> rails;
  std::map<int, double> nvlink_factor;                        // node → factor
  std::map<std::pair<int, std::string>, double> rail_factor;  // (node, hca) → factor, 0: down
  std::map<std::pair<int, int>, double> link_factor;          // (low, high) → factor
  std::map<int, std::string> dies_in;                         // node → step kind it dies in

  double intra(int node) const {
    auto found = nvlink_factor.find(node);
    return nvlink_gbps * (found == nvlink_factor.end() ? 1.0 : found->second);
  }
  double rail(int node, const std::string& hca) const {
    auto found = rail_factor.find({node, hca});
    return rail_gbps * (found == rail_factor.end() ? 1.0 : found->second);
  }
  double link(int a, int b) const {
    auto found = link_factor.find({std::min(a, b), std::max(a, b)});
    return found == link_factor.end() ? 1.0 : found->second;
  }
  // NCCL stripes its channels evenly over the rails, so the slowest rail paces all of them.
  double network(int a, int b) const {
    double slowest = rail_gbps;
    for (const std::string& hca : rails) slowest = std::min({slowest, rail(a, hca), rail(b, hca)});
    return static_cast<double>(rails.size()) * slowest * link(a, b);
  }
  double group(const std::vector<int>& nodes) const {
    double figure = intra(nodes.front());
    for (size_t i = 0; i < nodes.size(); ++i) {
      figure = std::min(figure, intra(nodes[i]));
      if (i + 1 < nodes.size()) figure = std::min(figure, network(nodes[i], nodes[i + 1]));
    }
    if (nodes.size() > 2) figure = std::min(figure, network(nodes.back(), nodes.front()));
    for (const auto& [pair, factor] : link_factor) {
      if (nodes.size() > 2 && pair.second < nnodes) {
        figure = std::min(figure, network(pair.first, pair.second));
      }
    }
    return figure;
  }
};

Cluster read_model(const Json& model, int nnodes) {
  if (!model.is_object()) bad_model("the model must be a JSON object");
  Cluster cluster;
  cluster.nnodes = nnodes;
  cluster.nvlink_gbps = number_or(model, "nvlink_gbps", cluster.nvlink_gbps);
  cluster.rail_gbps = number_or(model, "rail_gbps", cluster.rail_gbps);
  cluster.step_s = number_or(model, "step_s", cluster.step_s);
  if (const Json* rails = model.find("rails"); rails && rails->is_array()) {
    for (const Json& hca : rails->as_array()) {
      if (!hca.is_string()) bad_model("`rails` lists HCA names");
      cluster.rails.push_back(hca.as_string());
    }
  }
  if (cluster.rails.empty()) cluster.rails = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};
  const Json* faults = model.find("faults");
  if (!faults || !faults->is_array()) return cluster;
  for (const Json& fault : faults->as_array()) {
    int node = node_of(fault);
    double factor = number_or(fault, "factor", 1.0);
    if (const Json* dies = fault.find("dies_in"); dies && dies->is_string()) {
      cluster.dies_in[node] = dies->as_string();
    } else if (const Json* hca = fault.find("rail"); hca && hca->is_string()) {
      const Json* down = fault.find("down");
      cluster.rail_factor[{node, hca->as_string()}] =
          down && down->is_bool() && down->as_bool() ? 0.0 : factor;
    } else if (const Json* nvlink = fault.find("nvlink"); nvlink && nvlink->is_number()) {
      cluster.nvlink_factor[node] = nvlink->as_number();
    } else if (const Json* link = fault.find("link"); link && link->is_array()) {
      const auto& ends = link->as_array();
      if (ends.size() != 2 || !ends[0].is_integer() || !ends[1].is_integer())
        bad_model("`link` takes two node ranks");
      int a = static_cast<int>(ends[0].as_int()), b = static_cast<int>(ends[1].as_int());
      cluster.link_factor[{std::min(a, b), std::max(a, b)}] = factor;
    } else {
      bad_model("a fault names `rail`, `nvlink`, `link` or `dies_in`");
    }
  }
  return cluster;
}

void pause_for(double seconds) {
  sleep_until(time_after(Clock::now(), seconds));
}

class SimulatedCollective : public Collective {
 public:
  SimulatedCollective(Cluster cluster, int node_rank)
      : cluster_(std::move(cluster)), rank_(node_rank) {}

  std::vector<SweepRow> sweep(const NcclCheckRequest& request, Clock::time_point) override {
    maybe_die("sweep");
    std::vector<int> all;
    for (int node = 0; node < cluster_.nnodes; ++node) all.push_back(node);
    double peak = cluster_.group(all);
    int ranks = request.nnodes * request.nproc_per_node;
    std::vector<SweepRow> rows;
    for (std::uint64_t bytes : sweep_sizes(request.max_bytes)) {
      // Latency-bound below about 1 MiB, as a real all-reduce is.
      double busbw = peak * static_cast<double>(bytes) / (static_cast<double>(bytes) + 1048576.0);
      double algbw = ranks > 1 ? busbw * ranks / (2.0 * (ranks - 1)) : busbw;
      SweepRow row;
      row.bytes = bytes;
      row.count = bytes / 4;
      row.algbw_gbps = algbw;
      row.busbw_gbps = allreduce_busbw(algbw, ranks);
      row.time_us = static_cast<double>(bytes) / 1e3 / algbw;
      rows.push_back(row);
    }
    pause_for(cluster_.step_s);
    return rows;
  }

  StepFigure step(const StepSpec& spec) override {
    if (spec.nodes.empty()) return {};
    maybe_die(spec.kind);
    StepFigure figure;
    for (int node : spec.nodes) {
      auto dies = cluster_.dies_in.find(node);
      if (node != rank_ && dies != cluster_.dies_in.end() && dies->second == spec.kind) {
        // A real collective hangs when a member dies: it ends at the step's deadline.
        pause_for(spec.timeout_s);
        figure.error = "timed out after " + std::to_string(spec.timeout_s) + " s";
        return figure;
      }
    }
    pause_for(cluster_.step_s);
    if (spec.kind == "rail") {
      figure.hca = cluster_.rails.at(static_cast<size_t>(spec.rail));
      figure.hca = figure.hca.substr(0, figure.hca.find(':'));
      double slowest = cluster_.rail_gbps;
      for (int node : spec.nodes) slowest = std::min(slowest, cluster_.rail(node, figure.hca));
      if (spec.nodes.size() == 2) slowest *= cluster_.link(spec.nodes[0], spec.nodes[1]);
      if (slowest <= 0) figure.error = "no connection over " + figure.hca;
      figure.busbw_gbps = slowest;
      return figure;
    }
    figure.busbw_gbps = cluster_.group(spec.nodes);
    return figure;
  }

  std::vector<std::string> rails() const override { return cluster_.rails; }
  std::string group_id() override { return ""; }
  std::string version() const override { return ""; }
  void finish(Clock::time_point) override {}

 private:
  // A node the model kills dies the way a crashed host does: without a word to anyone.
  void maybe_die(const std::string& kind) const {
    auto dies = cluster_.dies_in.find(rank_);
    if (dies != cluster_.dies_in.end() && dies->second == kind) ::_exit(137);
  }

  Cluster cluster_;
  int rank_;
};

}  // namespace

std::unique_ptr<Collective> make_simulated_collective(const Json& model, int node_rank,
                                                      int nnodes) {
  return std::make_unique<SimulatedCollective>(read_model(model, nnodes), node_rank);
}

std::vector<std::string> hcas_of(const std::string& nccl_ib_hca) {
  std::vector<std::string> out;
  std::string text = nccl_ib_hca;
  if (!text.empty() && (text[0] == '=' || text[0] == '^')) text.erase(0, 1);
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string entry =
        text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!entry.empty()) out.push_back(entry);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace boot
