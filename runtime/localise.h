#pragma once
// The localisation after the sweep (runtime/README.md, "Localisation"): per node, then pairs of
// nodes in two rounds, then the rails of the suspects, each step sent by rank 0 over the control
// connections, bounded in time; a node that dies mid-step is the suspect.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collective.h"
#include "net.h"

namespace boot {

/// A figure below this fraction of its step's typical figure is slow ("far below the others").
inline constexpr double kSlowFraction = 0.6;

/// One node's all-reduce over its own GPUs.
struct NodeRow {
  int node = 0;
  double busbw_gbps = 0;
  std::string error;
};

/// Two nodes' all-reduce together, in round `round` of the pairings.
struct PairRow {
  int round = 0;
  int a = 0, b = 0;
  double busbw_gbps = 0;
  std::string error;
};

/// A suspect's pair test over one HCA only.
struct RailRow {
  int node = 0;
  int partner = 0;
  std::string hca;
  double busbw_gbps = 0;
  std::string error;
};

/// How long one step took, as rank 0 saw it.
struct StepTime {
  std::string step;
  double seconds = 0;
};

/// What a platform engineer should look at: a node, a node's rail, or the link between two nodes
/// (partner >= 0), with the figure that gave it away.
struct Suspect {
  int node = 0;
  int partner = -1;  ///< >= 0: the link or switch between node and partner
  std::string rail;  ///< the HCA, when one rail is at fault
  std::string reason;
  double measured_gbps = 0;
  double expected_gbps = 0;
  std::string check;  ///< what to check, in a platform engineer's words
};

/// Everything the localisation measured and concluded.
struct Localisation {
  bool ran = false;
  std::vector<NodeRow> nodes;
  std::vector<PairRow> pairs;
  std::vector<RailRow> rails;
  std::vector<StepTime> steps;
  std::vector<Suspect> suspects;
};

/// The pairings: the ring's edges (i, i+1 mod n) in rounds of disjoint pairs, so every node meets
/// two partners: two rounds for an even n, three for an odd one (the last holds one pair); one
/// round of one pair for n = 2, none for n = 1.
std::vector<std::vector<std::pair<int, int>>> pair_rounds(int nnodes);

/// The typical figure of a step: its upper quartile (0 for none), which stays a healthy figure
/// while up to a quarter of the figures are bad (one bad node slows two of four pairs).
double typical(std::vector<double> figures);

/// Suspects from the per-node rows: a failed step, or a figure far below the typical one.
std::vector<Suspect> judge_nodes(const std::vector<NodeRow>& rows);

/// The nodes slow with every partner they had (at least two), that are not `named` already, and
/// the links slow only together (neither end slow elsewhere nor named).
struct PairVerdict {
  std::vector<int> network_suspects;  ///< nodes to run the rail test on, named whatever it finds
  std::vector<int> unjudged;  ///< nodes of a lone pair: the rail test on them names only bad rails
  std::vector<Suspect> links;
  double expected_gbps = 0;
};

/// Judges the pair rows given the nodes already named by the per-node step.
PairVerdict judge_pairs(const std::vector<PairRow>& rows, const std::vector<int>& named);

/// Suspects from the rail rows: each slow or failed rail (a link's when both ends were under
/// test); a network suspect with no single bad rail is named as a node slow with every partner.
std::vector<Suspect> judge_rails(const std::vector<RailRow>& rows, const PairVerdict& verdict,
                                 const std::vector<PairRow>& pairs);

/// The control connections as the self-test uses them before the supervisor takes them over:
/// rank 0 holds one per member (index = rank, index 0 empty), a member holds the one to rank 0.
struct NodeLinks {
  std::vector<std::unique_ptr<LineConnection>> members;
  std::unique_ptr<LineConnection> rank0;
};

/// Rank 0: waits up to `wait_s` for every member to finish its sweep and say so; the members that
/// died or stayed silent are returned as suspects (and their connections closed).
std::vector<Suspect> await_members(NodeLinks& links, int nnodes, double wait_s);

/// Rank 0: runs the localisation through the members, each step bounded by `step_timeout_s`;
/// members that die or stay silent are named and end it. `bytes` is each step's message size.
Localisation localise(Collective& collective, NodeLinks& links, int nnodes, std::uint64_t bytes,
                      double step_timeout_s);

/// Rank 0: tells every member the run is over and the code to exit with.
void end_steps(NodeLinks& links, int code);

/// A member: says it is ready, then runs the steps rank 0 sends until it says the run is over;
/// returns that code.
/// Throws BootError(kExitPeerLost) when rank 0 goes away or sends nothing for `wait_s`.
int follow_steps(Collective& collective, LineConnection& rank0, double wait_s);

/// The localisation's rows and suspects as results.json holds them.
Json localisation_to_json(const Localisation& localisation);

}  // namespace boot
