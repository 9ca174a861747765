// How the checker tells a launcher (started once per node) from a worker program (started once
// per GPU), behind the wrappers that keep a program's arguments (issue 31 item 6).

#include <catch2/catch.hpp>

#include "compiler/check/launcher.h"

namespace mlenv::check {
namespace {

using Words = std::vector<std::string>;

Launcher classify(Words words) {
  return classify_launcher(words);
}

}  // namespace

TEST_CASE("launcher: the module forms of torchrun, DeepSpeed and Accelerate are launchers") {
  // torch/distributed/launch.py forwards to torch.distributed.run with the same node options;
  // DeepSpeed's bin/deepspeed and Accelerate's `accelerate-launch` console script call the
  // `main` of deepspeed.launcher.runner and accelerate.commands.launch.
  CHECK(classify({"python", "-m", "torch.distributed.launch", "t.py"}).kind == "torchrun");
  CHECK(classify({"python3", "-m", "torch.distributed.run", "t.py"}).prefix == 3);
  CHECK(classify({"python", "-m", "deepspeed.launcher.runner", "t.py"}).kind == "deepspeed");
  CHECK(classify({"python", "-m", "accelerate.commands.launch", "t.py"}).kind == "accelerate");
  CHECK(classify({"accelerate-launch", "t.py"}).kind == "accelerate");
  // Interpreter options before -m, and -m with its module in one word.
  Launcher unbuffered =
      classify({"/usr/bin/python3.12", "-u", "-X", "dev", "-m", "torch.distributed.run", "t.py"});
  CHECK(unbuffered.kind == "torchrun");
  CHECK(unbuffered.prefix == 6);
  CHECK(classify({"python", "-mtorch.distributed.run", "t.py"}).prefix == 2);
  // Another module, or python running a script, is a worker program.
  CHECK(classify({"python", "-m", "my.trainer"}).kind.empty());
  CHECK(classify({"python", "train.py"}).kind.empty());
  CHECK(classify({"python", "-c", "import torch"}).kind.empty());
}

TEST_CASE("launcher: env, uv run, conda run and pixi run count into the launcher's prefix") {
  Launcher env = classify({"env", "-u", "RANK", "NCCL_DEBUG=INFO", "torchrun", "t.py"});
  CHECK(env.kind == "torchrun");
  CHECK(env.prefix == 5);
  CHECK(classify({"/usr/bin/env", "A=1", "B=2", "deepspeed", "t.py"}).prefix == 4);
  Launcher uv = classify({"uv", "run", "--with", "deepspeed", "--frozen", "python", "-m",
                          "deepspeed.launcher.runner", "t.py"});
  CHECK(uv.kind == "deepspeed");
  CHECK(uv.prefix == 8);
  CHECK(classify({"uv", "run", "--", "accelerate", "launch", "t.py"}).prefix == 5);
  Launcher conda =
      classify({"conda", "run", "-n", "train", "--no-capture-output", "torchrun", "t.py"});
  CHECK(conda.kind == "torchrun");
  CHECK(conda.prefix == 6);
  CHECK(classify({"micromamba", "run", "-p", "/opt/env", "torchrun", "t.py"}).prefix == 5);
  CHECK(classify({"pixi", "run", "-e", "cuda", "torchrun", "t.py"}).prefix == 5);
  // Wrappers nest.
  Launcher nested =
      classify({"env", "X=1", "uv", "run", "python", "-m", "torch.distributed.run", "t.py"});
  CHECK(nested.kind == "torchrun");
  CHECK(nested.prefix == 7);
  // A wrapper before a worker program leaves a worker program.
  CHECK(classify({"env", "X=1", "python", "train.py"}).kind.empty());
  CHECK(classify({"uv", "run", "train.py"}).kind.empty());
}

TEST_CASE("launcher: node arguments already in a wrapped launcher are found after the prefix") {
  Words command = {"env", "X=1", "torchrun", "--nnodes=2", "t.py"};
  Launcher launcher = classify_launcher(command);
  std::vector<LauncherConflict> conflicts = launcher_conflicts(command, launcher);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts[0].index == 3);
  CHECK(launcher_example(command, launcher) ==
        "env X=1 torchrun --nnodes=N --node_rank=R --master_addr=A --master_port=P "
        "--nproc_per_node=G t.py");
}

TEST_CASE("launcher: a launcher behind words mlenvc does not understand is named") {
  auto named = [](Words words) {
    std::optional<LauncherMention> m = unrecognised_launcher(words);
    return m ? std::to_string(m->index) + " " + m->name + " " + m->kind : std::string("none");
  };
  CHECK(named({"sudo", "-E", "torchrun", "t.py"}) == "2 torchrun torchrun");
  CHECK(named({"nohup", "accelerate", "launch", "t.py"}) == "1 accelerate launch accelerate");
  // env -S splits its argument into words mlenv-boot would not see.
  CHECK(named({"env", "-S", "A=1", "deepspeed", "t.py"}) == "3 deepspeed deepspeed");
  CHECK(named({"python", "-m", "torch.distributed.elastic.multiprocessing", "t.py"}) ==
        "1 -m torch.distributed.elastic.multiprocessing torchrun");
  CHECK(named({"time", "python", "-m", "deepspeed.launcher.launch", "t.py"}) ==
        "2 -m deepspeed.launcher.launch deepspeed");
  // Recognised launchers, worker programs, and launcher names after the script are silent.
  CHECK(named({"env", "X=1", "torchrun", "t.py"}) == "none");
  CHECK(named({"python", "train.py", "--launcher", "torchrun"}) == "none");
  CHECK(named({"python", "-m", "my.trainer"}) == "none");
  CHECK(named({"accelerate", "config"}) == "none");
}

}  // namespace mlenv::check
