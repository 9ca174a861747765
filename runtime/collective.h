#pragma once
// The collective behind the self-test and its localisation, as a small interface with two
// backends: NCCL (collective_nccl.cc, built where CUDA and NCCL are found) and a simulated one
// driven by a model of the cluster (collective_sim.cc), so the localisation runs across real
// mlenv-boot processes without a GPU.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clock.h"
#include "json.h"

namespace boot {

struct NcclCheckRequest;
struct SweepRow;

/// One step of the localisation as this node runs it. Every node of the job runs every step (the
/// NCCL sub-communicators come from a collective split of the world communicator); a node in no
/// group of the step has an empty `nodes`.
struct StepSpec {
  std::string kind;        ///< "node" (own GPUs), "pair" (with one partner), "rail" (one HCA)
  int group = -1;          ///< the group's number within the step, the split's color
  std::vector<int> nodes;  ///< the node ranks of this node's group, itself included, sorted
  int rail = -1;           ///< "rail": the index of the HCA, in this node's rail order
  std::uint64_t bytes = 0;
  double timeout_s = 60;
  std::string unique_id;  ///< "rail": the group's communicator id, made by rank 0 (hex)
};

/// What one node measured in a step: the group's all-reduce busbw, or why there is none.
struct StepFigure {
  double busbw_gbps = 0;
  std::string error;
  std::string hca;  ///< "rail": the HCA this node used
};

/// The collective of one node: every rank on this node's GPUs.
class Collective {
 public:
  virtual ~Collective() = default;
  /// The all-reduce sweep across every rank of every node, 8 bytes doubling up to max_bytes;
  /// throws BootError(kExitNcclCheckError) when it cannot run or misses the deadline.
  virtual std::vector<SweepRow> sweep(const NcclCheckRequest& request,
                                      Clock::time_point deadline) = 0;
  /// Runs this node's part of one localisation step, within spec.timeout_s; never throws for a
  /// failed measurement (that is the figure's error).
  virtual StepFigure step(const StepSpec& spec) = 0;
  /// This node's HCAs in rail order (the rail test runs once per entry).
  virtual std::vector<std::string> rails() const = 0;
  /// A fresh id for a communicator of its own (a rail group's), made on rank 0; "" when the
  /// backend needs none.
  virtual std::string group_id() = 0;
  /// The NCCL version measured with, empty for the simulation.
  virtual std::string version() const = 0;
  /// Ends the world communicator; called once, after the last step.
  virtual void finish(Clock::time_point deadline) = 0;
};

/// The variable that selects the simulated backend: the path of a cluster model (JSON). It is
/// for tests only; runtime/README.md documents the model.
inline constexpr const char* kSimulateVariable = "MLENV_BOOT_SIMULATE";

/// The simulated backend for this node; throws BootError(kExitConfigError) on a bad model.
std::unique_ptr<Collective> make_simulated_collective(const Json& model, int node_rank, int nnodes);

/// The NCCL backend (the world communicator is made by the first sweep); without NCCL it throws
/// BootError(kExitConfigError).
std::unique_ptr<Collective> make_nccl_collective(const std::vector<std::string>& rails);

/// The entries of an `NCCL_IB_HCA` value ("=mlx5_0:1,mlx5_1:1" → mlx5_0:1, mlx5_1:1).
std::vector<std::string> hcas_of(const std::string& nccl_ib_hca);

/// The variable that makes mlenv-boot a rail test's child: one communicator over one HCA
/// (NCCL reads NCCL_IB_HCA once per process, so each rail needs a process of its own).
inline constexpr const char* kRailStepVariable = "MLENV_BOOT_RAIL_STEP";

/// Runs the rail test's child when kRailStepVariable is set and returns its exit code; nullopt
/// otherwise. The child prints `MLENV_RAIL_BUSBW <GB/s>` on stdout.
std::optional<int> run_rail_step_child();

}  // namespace boot
