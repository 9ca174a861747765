// The day-2 commands against the recording client: the env resolved from the committed plans
// and its apply record, the exact client calls, and the client's recorded JSON parsed.
//
// The JSON under tests/plan/day2/ has the shape `oc get <kind> -o json` prints (a v1 List):
// Pod fields as in https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/;
// StatefulSet pods named `<statefulset>-<ordinal>` with the `apps.kubernetes.io/pod-index` label
// and Indexed Job pods with `batch.kubernetes.io/job-completion-index` as label and annotation
// (https://kubernetes.io/docs/reference/labels-annotations-taints/); Builds labelled
// `openshift.io/build-config.name` and numbered by the `openshift.io/build.number` annotation
// (openshift/oc pkg/helpers/build/constants.go).

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "compiler/apply/destroy.h"
#include "compiler/apply/results.h"
#include "compiler/day2/commands.h"
#include "compiler/day2/line_stream.h"
#include "targets/kube/day2/cluster_json.h"
#include "targets/openshift/day2/builds.h"
#include "targets/openshift/day2/routes.h"
#include "tests/plan/apply_fixture.h"
#include "tests/plan/golden.h"

namespace mlenv::plan::day2 {
namespace {

using namespace testing;

const std::string kRecorded = std::string(MLENV_PLAN_DAY2_DIR) + "/";

const std::string kStatusFile =
    R"({"format_version":1,"job":"barcelona/ml-dev-env","node_rank":0,"nnodes":2,)"
    R"("world_size":8,"transport":"rdma","transport_reason":"every node can use RDMA"})";

// A user's edit that a watch sees: new bytes, and a modification time it cannot miss even on
// a file system with coarse timestamps.
void edit(const std::string& file) {
  write_file(file, "print(2)\n");
  std::filesystem::last_write_time(
      file, std::filesystem::last_write_time(file) + std::chrono::seconds(5));
}

// The typical env planned with the day-2 keys and applied through the recording client; its
// cluster answers with the recorded pods, Routes, builds and status file.
struct Day2Fixture : ApplyFixture {
  explicit Day2Fixture(const std::string& storage = "per_pod", bool apply_it = true) {
    env.more_keys = {"\"nodes\": 2", "\"storage\": \"" + storage + "\"",
                     "\"ports\": {\"debugpy\": 5678, \"vscode\": 8080}"};
    commit_plan();
    if (apply_it) REQUIRE(apply() == 0);
    write_file(dir.path() + "/.status.json", kStatusFile);
    reply(
        {"get pods|0|@" + kRecorded + "pods_statefulset.json",
         "get routes|0|@" + kRecorded + "routes.json", "get builds|0|@" + kRecorded + "builds.json",
         "exec -n nccl-test ml-dev-env-0 -c mlenv -- cat|0|@" + dir.path() + "/.status.json"},
        true);
  }

  /// Runs `command` from the repository root with the log emptied; stdout in `out`, rendered
  /// diagnostics in `err`.
  int day2(const std::function<int(std::ostream&, Diagnostics&)>& command) {
    ChangeDir in(dir.path());
    write_file(log, "");
    std::ostringstream text;
    Diagnostics diagnostics;
    int status = command(text, diagnostics);
    out = text.str();
    std::ostringstream errors;
    SourceManager none;
    for (const Diagnostic& d : diagnostics.all()) render_text(errors, none, d);
    err = errors.str();
    for (std::size_t at; (at = err.find(dir.path())) != std::string::npos;)
      err.replace(at, dir.path().size(), "$TMP");
    UNSCOPED_INFO("stderr: " << err);
    return status;
  }
};

const std::string kPods =
    "oc get pods -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o json";

TEST_CASE("day2: the recorded pods of a StatefulSet are its ranks, a build pod is not", "[day2]") {
  std::string error;
  auto pods = parse_rank_pods(read_file(kRecorded + "pods_statefulset.json"), "ml-dev-env", error);
  REQUIRE(pods);
  REQUIRE(pods->size() == 2);
  CHECK((*pods)[0].name == "ml-dev-env-0");
  CHECK((*pods)[0].node == "gpu-node-a.barcelona.example.com");
  CHECK((*pods)[0].phase == "Running");
  CHECK((*pods)[0].restarts == 0);  // the proxy's restarts are not the rank's
  CHECK((*pods)[0].running);
  CHECK((*pods)[1].rank == 1);
  CHECK((*pods)[1].phase == "CrashLoopBackOff");
  CHECK((*pods)[1].restarts == 4);
  CHECK(!(*pods)[1].running);
}

TEST_CASE("day2: an Indexed Job's rank is its newest pod of that completion index", "[day2]") {
  std::string error;
  auto pods = parse_rank_pods(read_file(kRecorded + "pods_job.json"), "ml-dev-env", error);
  REQUIRE(pods);
  REQUIRE(pods->size() == 2);
  CHECK((*pods)[0].name == "ml-dev-env-0-x7k2p");
  CHECK((*pods)[1].name == "ml-dev-env-1-q9w8e");  // the replacement, not the failed pod
  CHECK((*pods)[1].node == "gpu-node-c");
  CHECK((*pods)[1].running);
}

TEST_CASE("day2: what the cluster says is parsed without trusting it", "[day2]") {
  std::string error;
  CHECK(!parse_rank_pods("not json: [", "env", error));
  CHECK(!parse_rank_pods("{\"kind\": \"Status\"}", "env", error));
  CHECK(error == "the client's output is not a JSON list of objects");
  // Odd shapes are skipped or left empty, never a crash.
  auto odd = parse_rank_pods(
      R"({"items": [7, {"metadata": {"name": "env-99999999"}}, {"metadata": {"name": "env-x"}},)"
      R"( {"metadata": {"name": "env-3", "labels": []}, "status": {"phase": ["x"]}}]})",
      "env", error);
  REQUIRE(odd);
  REQUIRE(odd->size() == 1);
  CHECK((*odd)[0].rank == 3);
  CHECK((*odd)[0].phase == "Unknown");
  auto routes = parse_routes(read_file(kRecorded + "routes.json"), error);
  REQUIRE(routes);
  REQUIRE(routes->size() == 2);
  CHECK((*routes)[0].url == "https://ml-dev-env-jupyter-nccl-test.apps.barcelona.example.com/lab");
  CHECK((*routes)[1].url == "https://ml-dev-env-vscode-nccl-test.apps.barcelona.example.com");
  auto build = parse_latest_build(read_file(kRecorded + "builds.json"), error);
  REQUIRE(build);
  CHECK(build->name == "ml-dev-env-10");  // by number: 10 is newer than 9 and 2
  CHECK(build->phase == "Running");
  CHECK(!parse_latest_build(R"({"items": []})", error));
  CHECK(error == "no build yet");
  auto status = parse_boot_status(kStatusFile, error);
  REQUIRE(status);
  CHECK(status->transport == "rdma");
  CHECK(status->node_rank == 0);
  CHECK(status->nnodes == 2);
  CHECK(!parse_boot_status(R"({"format_version": 2})", error));
}

TEST_CASE("day2: status shows each rank, its transport, the build and the URLs", "[day2]") {
  Day2Fixture f;
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{
            kPods,
            // Only the running rank is asked for its status file.
            "oc exec -n nccl-test ml-dev-env-0 -c mlenv -- cat /run/mlenv/status.json",
            "oc get builds -n nccl-test -l openshift.io/build-config.name=ml-dev-env -o json",
            "oc get routes -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o json"});
  CHECK(f.out ==
        "barcelona/ml-dev-env (namespace nccl-test, dev, 2 nodes)\n"
        "  RANK  POD           NODE                              PHASE             RESTARTS  "
        "TRANSPORT\n"
        "  0     ml-dev-env-0  gpu-node-a.barcelona.example.com  Running           0         "
        "rdma\n"
        "  1     ml-dev-env-1  gpu-node-b.barcelona.example.com  CrashLoopBackOff  4         "
        "-\n"
        "  build: ml-dev-env-10 Running\n"
        "  url: https://ml-dev-env-jupyter-nccl-test.apps.barcelona.example.com/lab "
        "(ml-dev-env-jupyter)\n"
        "  url: https://ml-dev-env-vscode-nccl-test.apps.barcelona.example.com "
        "(ml-dev-env-vscode)\n");
  // Without ENV: every applied env, the same.
  std::string one = f.out;
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"", "", 60}, out, d);
  }) == 0);
  CHECK(f.out == one);
}

TEST_CASE("day2: status shows a service that exited while the job runs", "[day2]") {
  // mlenv-boot records a tool's exit in its status file (runtime/boot_status.h): Jupyter
  // refusing to run as root would otherwise be silent, the port-forward leading nowhere.
  Day2Fixture f;
  std::string status = kStatusFile;
  status.insert(status.size() - 1, R"(,"exited_services":[{"name":"service jupyter","code":1}])");
  write_file(f.dir.path() + "/.status.json", status);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.out.find("\n  rank 0: service jupyter exited with code 1 (mlenvc logs "
                   "barcelona/ml-dev-env)\n") != std::string::npos);
}

TEST_CASE("day2: status escapes what the cluster says before printing it", "[day2]") {
  Day2Fixture f;
  write_file(f.dir.path() + "/.hostile.json",
             R"({"items": [{"metadata": {"name": "ml-dev-env-0"}, "spec": {"nodeName":)"
             R"( "node\u001b]0;owned\u0007"}, "status": {"phase": "Pending\r\nRunning"}}]})");
  f.reply({"get pods|0|@" + f.dir.path() + "/.hostile.json"}, true);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.out.find('\x1b') == std::string::npos);
  CHECK(f.out.find('\r') == std::string::npos);
  CHECK(f.out.find("node\\u001b]0;owned\\u0007") != std::string::npos);
  CHECK(f.out.find("1     -             -") != std::string::npos);  // rank 1 has no pod
}

TEST_CASE("day2: status keeps one deadline for all its client calls", "[day2]") {
  Day2Fixture f;
  // The status file's exec and the builds hang: before, each got the whole --timeout (with
  // 1,024 running ranks, 1,024 x 60 s). The Routes, asked after the deadline, are not.
  setenv("MLENV_FAKE_SLEEP", "30", 1);
  setenv("MLENV_FAKE_SLEEP_ON", "exec\\|get builds", 1);
  auto started = std::chrono::steady_clock::now();
  CHECK(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 2}, out, d);
  }) == 1);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(3500));
  CHECK(f.out.find("  0     ml-dev-env-0") != std::string::npos);
  CHECK(f.err.find("get routes -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o json` "
                   "did not finish within the command's --timeout of 2s") != std::string::npos);
}

TEST_CASE("day2: shell opens a login shell in rank 0's pod, or the rank asked", "[day2]") {
  Day2Fixture f;
  ShellRequest request;
  request.target = {"barcelona/ml-dev-env", "", 60};
  request.tty = true;
  REQUIRE(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(request, d); }) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{kPods,
                                 "oc exec -it -n nccl-test ml-dev-env-0 -c mlenv -- /bin/sh -c "
                                 "command -v bash >/dev/null && exec bash -l; exec sh -l"});
  // An Indexed Job's rank 1 is its newest pod of index 1; no terminal, no -t.
  f.reply({"get pods|0|@" + kRecorded + "pods_job.json"}, true);
  request.rank = 1;
  request.tty = false;
  REQUIRE(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(request, d); }) == 0);
  CHECK(f.commands().back() ==
        "oc exec -i -n nccl-test ml-dev-env-1-q9w8e -c mlenv -- /bin/sh -c "
        "command -v bash >/dev/null && exec bash -l; exec sh -l");
  // The shell's exit status is the command's.
  f.reply({"exec -i|3|"}, true);
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(request, d); }) == 3);
}

TEST_CASE("day2: shell refuses a rank that does not exist or does not run", "[day2]") {
  Day2Fixture f;
  ShellRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.rank = 2;
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(request, d); }) == 1);
  CHECK(f.err.find("error[E0751]: `barcelona/ml-dev-env` has no rank 2") != std::string::npos);
  CHECK(f.err.find("its ranks are 0 to 1") != std::string::npos);
  CHECK(f.commands().empty());
  request.rank = -1;
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(request, d); }) == 1);
  CHECK(f.err.find("[E0751]") != std::string::npos);
  request.rank = 1;
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(request, d); }) == 1);
  CHECK(f.err.find("error[E0752]: rank 1 of `barcelona/ml-dev-env` (pod `ml-dev-env-1`) is "
                   "CrashLoopBackOff, not running") != std::string::npos);
  CHECK(f.commands() == std::vector<std::string>{kPods});
}

TEST_CASE("day2: logs prints every rank's log, each line prefixed with its rank", "[day2]") {
  Day2Fixture f;
  write_file(f.dir.path() + "/.log0", "rendezvous: 2 nodes\ntransport rdma\n");
  write_file(f.dir.path() + "/.log1", "waiting for rank 0\nno newline at the end");
  f.reply({"logs -n nccl-test ml-dev-env-0|0|@" + f.dir.path() + "/.log0",
           "logs -n nccl-test ml-dev-env-1|0|@" + f.dir.path() + "/.log1"},
          true);
  LogsRequest request;
  request.target = {"ml-dev-env", "", 60};
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  CHECK(f.commands() == std::vector<std::string>{kPods,
                                                 "oc logs -n nccl-test ml-dev-env-0 -c mlenv",
                                                 "oc logs -n nccl-test ml-dev-env-1 -c mlenv"});
  CHECK(f.out ==
        "[0] rendezvous: 2 nodes\n[0] transport rdma\n[1] waiting for rank 0\n"
        "[1] no newline at the end\n");
  request.follow = true;
  request.rank = 1;
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  CHECK(f.commands() ==
        std::vector<std::string>{kPods, "oc logs -n nccl-test ml-dev-env-1 -c mlenv -f"});
  CHECK(f.out == "[1] waiting for rank 0\n[1] no newline at the end\n");
  request.rank = 7;
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) == 1);
  CHECK(f.err.find("[E0751]") != std::string::npos);
  // A rank whose log cannot be read is reported; the others are still shown.
  request.rank.reset();
  request.follow = false;
  f.reply({"logs -n nccl-test ml-dev-env-1|1|"}, true);
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) == 1);
  CHECK(f.out == "[0] rendezvous: 2 nodes\n[0] transport rdma\n");
  CHECK(f.err.find("error[E0706]: `$TMP/.bin/oc logs -n nccl-test ml-dev-env-1 -c mlenv` exited "
                   "with status 1") != std::string::npos);
}

TEST_CASE("day2: followed logs are whole lines, whichever rank finishes a line first", "[day2]") {
  // Real processes: rank 0 writes half a line and ends it only after rank 1 has written a whole
  // line. Whatever order they are read in, every line comes out whole.
  TempDir dir;
  const std::string mark = dir.path() + "/rank1-wrote";
  std::vector<LineSource> sources = {
      {{"/bin/sh", "-c",
        "printf 'ab'; while [ ! -e " + mark + " ]; do sleep 0.02; done; printf 'c\\nlast'"},
       "[0] "},
      {{"/bin/sh", "-c", "printf 'x\\n'; touch " + mark}, "[1] "}};
  std::ostringstream out;
  CHECK(stream_lines(sources, out, 0) == std::vector<int>{0, 0});
  CHECK((out.str() == "[1] x\n[0] abc\n[0] last\n" || out.str() == "[0] abc\n[1] x\n[0] last\n" ||
         out.str() == "[0] abc\n[0] last\n[1] x\n"));
  // A line longer than kMaxLine comes in pieces, each prefixed.
  std::ostringstream long_out;
  std::vector<LineSource> long_line = {
      {{"/bin/sh", "-c", "head -c 70000 /dev/zero | tr '\\0' a; echo"}, "> "}};
  CHECK(stream_lines(long_line, long_out, 0) == std::vector<int>{0});
  CHECK(long_out.str() ==
        "> " + std::string(kMaxLine, 'a') + "\n> " + std::string(70000 - kMaxLine, 'a') + "\n");
  // A deadline stops a follower that would go on, after what it wrote.
  std::ostringstream stopped;
  std::vector<LineSource> endless = {{{"/bin/sh", "-c", "echo x; exec sleep 30"}, "> "}};
  CHECK(stream_lines(endless, stopped, 3) == std::vector<int>{124});
  CHECK(stopped.str() == "> x\n");
}

TEST_CASE("day2: sync copies into every pod with per-pod storage, once with rwx", "[day2]") {
  Day2Fixture f;
  write_file(f.dir.path() + "/work/train.py", "print(1)\n");
  f.reply({"get pods|0|@" + kRecorded + "pods_job.json"}, true);  // both ranks running
  SyncRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.dir = "work/";
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) {
    return sync_workspace(request, out, d);
  }) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{
            kPods, "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0-x7k2p:/workspace",
            "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-1-q9w8e:/workspace"});
  CHECK(f.out ==
        "Syncing work/ to /workspace of rank 0 (ml-dev-env-0-x7k2p)\n"
        "Syncing work/ to /workspace of rank 1 (ml-dev-env-1-q9w8e)\n");

  // kubectl has no rsync: `cp DIR/.` copies the contents the same way.
  request.target.client = f.dir.path() + "/.bin/kubectl";
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) {
    return sync_workspace(request, out, d);
  }) == 0);
  CHECK(f.commands()[1] == "kubectl cp -n nccl-test -c mlenv work/. ml-dev-env-0-x7k2p:/workspace");
  request.target.client = "";

  Day2Fixture shared("rwx");
  write_file(shared.dir.path() + "/work/train.py", "print(1)\n");
  request.dir = "work";
  REQUIRE(shared.day2([&](std::ostream& out, Diagnostics& d) {
    return sync_workspace(request, out, d);
  }) == 0);
  CHECK(shared.commands() ==
        std::vector<std::string>{
            kPods, "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0:/workspace"});
}

TEST_CASE("day2: sync reports a pod that does not run and still syncs the others", "[day2]") {
  Day2Fixture f;
  write_file(f.dir.path() + "/work/train.py", "print(1)\n");
  SyncRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.dir = "work";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) {
    return sync_workspace(request, out, d);
  }) == 1);
  CHECK(f.commands() ==
        std::vector<std::string>{
            kPods, "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0:/workspace"});
  CHECK(f.err.find("error[E0752]: rank 1 of `barcelona/ml-dev-env` (pod `ml-dev-env-1`) is "
                   "CrashLoopBackOff, not running") != std::string::npos);
  request.dir = "missing";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) {
    return sync_workspace(request, out, d);
  }) == 1);
  CHECK(f.err.find("error[E0754]: `missing` is not a directory") != std::string::npos);
  CHECK(f.commands().empty());
}

TEST_CASE("day2: sync --watch copies again when a file changes", "[day2]") {
  Day2Fixture f("rwx");
  const std::string file = f.dir.path() + "/work/train.py";
  write_file(file, "print(1)\n");
  int looks = 0;
  SyncRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.dir = "work";
  request.watch = true;
  request.poll_ms = 10;
  // First look: nothing changed. Second: the file is edited. Third: stop.
  request.keep_watching = [&] {
    ++looks;
    if (looks == 2) {
      edit(file);
    }
    return looks < 3;
  };
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) {
    return sync_workspace(request, out, d);
  }) == 0);
  const std::string rsync =
      "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0:/workspace";
  CHECK(f.commands() == std::vector<std::string>{kPods, rsync, kPods, rsync});
  CHECK(looks == 3);
}

TEST_CASE("day2: port-forward reaches debugpy or a service in rank 0's pod", "[day2]") {
  Day2Fixture f;
  PortForwardRequest request;
  request.target = {"ml-dev-env", "", 60};
  REQUIRE(f.day2([&](std::ostream&, Diagnostics& d) { return port_forward(request, d); }) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{kPods, "oc port-forward -n nccl-test pod/ml-dev-env-0 5678:5678"});
  request.service = "vscode";
  request.local_port = 18080;
  REQUIRE(f.day2([&](std::ostream&, Diagnostics& d) { return port_forward(request, d); }) == 0);
  CHECK(f.commands().back() == "oc port-forward -n nccl-test pod/ml-dev-env-0 18080:8080");
  request.service = "jupyter";
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return port_forward(request, d); }) == 1);
  CHECK(f.err.find("error[E0753]: `barcelona/ml-dev-env` has no port `jupyter`") !=
        std::string::npos);
  CHECK(f.err.find("`debugpy`: 5678") != std::string::npos);
  CHECK(f.commands().empty());
}

// The calls of a dev session but the forward, which runs beside them (its place in the log
// is the scheduler's), and the forward's calls apart.
std::pair<std::vector<std::string>, std::vector<std::string>> split_forward(
    const std::vector<std::string>& commands) {
  std::pair<std::vector<std::string>, std::vector<std::string>> out;
  for (const std::string& command : commands)
    (command.find(" port-forward ") != std::string::npos ? out.second : out.first)
        .push_back(command);
  return out;
}

// The stand-in's pids (MLENV_FAKE_PIDS) that still name a process.
std::vector<std::string> living(const std::string& pid_file) {
  std::vector<std::string> out;
  std::istringstream in(read_file(pid_file));
  for (std::string pid; std::getline(in, pid);) {
    if (kill(std::stoi(pid), 0) == 0) out.push_back(pid);
  }
  return out;
}

TEST_CASE("day2: dev-session forwards debugpy while it syncs on every change, until Ctrl-C",
          "[day2]") {
  Day2Fixture f;
  const std::string file = f.dir.path() + "/work/train.py";
  write_file(file, "print(1)\n");
  f.reply({"get pods|0|@" + kRecorded + "pods_job.json"}, true);  // both ranks running
  const std::string pids = f.dir.path() + "/.fake-pids";
  setenv("MLENV_FAKE_SLEEP", "600", 1);  // the forward runs until it is stopped
  setenv("MLENV_FAKE_SLEEP_ON", "port-forward", 1);
  setenv("MLENV_FAKE_PIDS", pids.c_str(), 1);
  DevSessionRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.dir = "work";
  request.poll_ms = 10;
  int looks = 0;
  // First look: nothing changed. Second: the file is edited. Third, once the forward runs (it
  // wrote its pid): Ctrl-C.
  request.keep_watching = [&] {
    ++looks;
    if (looks == 2) {
      edit(file);
    }
    if (looks >= 3 && !read_file(pids).empty()) raise(SIGINT);
    return true;
  };
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return dev_session(request, out, d); }) ==
          0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(300));
  const std::string rsync0 =
      "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-0-x7k2p:/workspace";
  const std::string rsync1 =
      "oc rsync -n nccl-test -c mlenv --no-perms work/ ml-dev-env-1-q9w8e:/workspace";
  auto [calls, forward] = split_forward(f.commands());
  CHECK(calls == std::vector<std::string>{kPods, kPods, rsync0, rsync1, kPods, rsync0, rsync1});
  CHECK(forward ==
        std::vector<std::string>{"oc port-forward -n nccl-test pod/ml-dev-env-0-x7k2p 5678:5678"});
  CHECK(f.out.starts_with("Forwarding localhost:5678 to debugpy in rank 0's pod: $ " +
                          f.dir.path() +
                          "/.bin/oc port-forward -n nccl-test pod/ml-dev-env-0-x7k2p 5678:5678\n"));
  CHECK(f.out.ends_with("Dev session of barcelona/ml-dev-env stopped\n"));
  // The forward was stopped with the session: no process of it is left.
  CHECK(!read_file(pids).empty());
  CHECK(living(pids).empty());
}

TEST_CASE("day2: dev-session stops when its port-forward ends", "[day2]") {
  Day2Fixture f;
  write_file(f.dir.path() + "/work/train.py", "print(1)\n");
  f.reply({"get pods|0|@" + kRecorded + "pods_job.json", "port-forward|1|"}, true);
  DevSessionRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.dir = "work";
  request.poll_ms = 10;
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return dev_session(request, out, d); }) ==
        1);
  CHECK(f.out.ends_with("The port-forward ended (exit status 1): the dev session stops\n"));
}

TEST_CASE("day2: dev-session refuses what sync and port-forward refuse, before any client call",
          "[day2]") {
  Day2Fixture f;
  DevSessionRequest request;
  request.target = {"ml-dev-env", "", 60};
  request.dir = "missing";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return dev_session(request, out, d); }) ==
        1);
  CHECK(f.err.find("error[E0754]: `missing` is not a directory") != std::string::npos);
  CHECK(f.commands().empty());

  write_file(f.dir.path() + "/work/train.py", "print(1)\n");
  request.dir = "work";
  request.target.env = "nowhere";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return dev_session(request, out, d); }) ==
        1);
  CHECK(f.err.find("error[E0715]: no committed plan has env `nowhere`") != std::string::npos);
  CHECK(f.commands().empty());

  // No `debug = true`: no debugpy port to forward.
  f.env.more_keys = {"\"nodes\": 2", "\"storage\": \"per_pod\"", "\"ports\": {\"vscode\": 8080}"};
  f.commit_plan();
  REQUIRE(f.apply() == 0);
  request.target.env = "ml-dev-env";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return dev_session(request, out, d); }) ==
        1);
  CHECK(f.err.find("error[E0753]: `barcelona/ml-dev-env` has no port `debugpy`") !=
        std::string::npos);
  CHECK(f.err.find("   = set `debug = true` on the env, plan and apply\n") != std::string::npos);
  CHECK(f.commands().empty());
}

// `urls` of the typical env with no Route: each of its tools' port-forward instead.
const std::string kNoUrl =
    "barcelona/ml-dev-env exposes no URL\n"
    "  debugpy (port 5678): mlenvc port-forward ml-dev-env debugpy\n"
    "  vscode (port 8080): mlenvc port-forward ml-dev-env vscode\n";

TEST_CASE("day2: urls lists the env's Routes", "[day2]") {
  Day2Fixture f;
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_urls({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{
            "oc get routes -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o json"});
  CHECK(f.out ==
        "ml-dev-env-jupyter  https://ml-dev-env-jupyter-nccl-test.apps.barcelona.example.com/lab\n"
        "ml-dev-env-vscode  https://ml-dev-env-vscode-nccl-test.apps.barcelona.example.com\n");
  f.reply({"get routes|0|{\"items\": []}"}, true);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_urls({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.out == kNoUrl);
}

// Routes and Builds are OpenShift's kinds: a Kubernetes cluster's API has none, and kubectl
// refuses to get them (`error: the server doesn't have a resource type "routes"`, exit 1), so
// status and urls of a Kubernetes env must not ask (the stand-in answers as such a cluster:
// MLENV_FAKE_API). Before, both failed there with E0706.
TEST_CASE("day2: a Kubernetes env's status and urls ask for no Route or build", "[day2]") {
  Day2Fixture f("per_pod", false);
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  REQUIRE(f.apply() == 0);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  REQUIRE_FALSE(f.commands().empty());
  for (const std::string& command : f.commands()) {
    CHECK(command.find("routes") == std::string::npos);
    CHECK(command.find("builds") == std::string::npos);
  }
  CHECK(f.out.find("url:") == std::string::npos);
  CHECK(f.out.find("build:") == std::string::npos);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_urls({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.out == kNoUrl);
  for (const std::string& command : f.commands())
    CHECK(command.find("routes") == std::string::npos);
}

TEST_CASE("day2: status of a run Kueue holds says in which queue and why", "[day2]") {
  // Issue 30.5: Kueue keeps a queued JobSet suspended (no pod, every rank Missing) while its
  // Workload's QuotaReserved condition is False with Kueue's reason.
  Day2Fixture f("per_pod", false);
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  REQUIRE(f.apply() == 0);
  f.reply({"get pods|0|{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[]}",
           "get workloads.kueue.x-k8s.io|0|team-a\tFalse\tPending\tcouldn't assign flavors to "
           "pod set node: insufficient unused quota for nvidia.com/gpu"},
          true);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.out.find("Missing") != std::string::npos);
  CHECK(f.out.find("\n  queued in `team-a`: Pending: couldn't assign flavors to pod set node: "
                   "insufficient unused quota for nvidia.com/gpu\n") != std::string::npos);
  // Admitted (quota reserved): nothing to say.
  f.reply({"get workloads.kueue.x-k8s.io|0|team-a\tTrue\tQuotaReserved\t"}, true);
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 0);
  CHECK(f.out.find("queued") == std::string::npos);
}

// A day-2 command names pods, Routes and Jobs by the env's names, which another cluster may
// hold too (staging beside production): like apply (E0719), every command that asks the
// cluster first compares the host of the client's current server with the cluster's `api`.
TEST_CASE("day2: every command refuses a client pointed at another cluster, before it acts",
          "[day2]") {
  Day2Fixture f("per_pod", false);
  f.env.env_kind = "acceptance";  // results reads only an acceptance run's
  f.env.more_keys.push_back("\"api\": \"api.barcelona.example.com\"");
  f.commit_plan();
  setenv("MLENV_FAKE_SERVER", "https://api.barcelona.example.com:6443", 1);
  REQUIRE(f.apply() == 0);
  write_file(f.dir.path() + "/work/train.py", "print(1)\n");
  const EnvRequest target = {"ml-dev-env", "", 60};
  std::vector<std::pair<std::string, std::function<int(std::ostream&, Diagnostics&)>>> commands = {
      {"status", [&](std::ostream& out, Diagnostics& d) { return show_status(target, out, d); }},
      {"logs",
       [&](std::ostream& out, Diagnostics& d) {
         return show_logs({target, {}, false}, out, d);
       }},
      {"shell",
       [&](std::ostream&, Diagnostics& d) {
         return open_shell({target, 0, false}, d);
       }},
      {"sync",
       [&](std::ostream& out, Diagnostics& d) {
         SyncRequest request;
         request.target = target;
         request.dir = "work";
         return sync_workspace(request, out, d);
       }},
      {"port-forward",
       [&](std::ostream&, Diagnostics& d) {
         PortForwardRequest request;
         request.target = target;
         return port_forward(request, d);
       }},
      {"urls", [&](std::ostream& out, Diagnostics& d) { return show_urls(target, out, d); }},
      {"dev-session",
       [&](std::ostream& out, Diagnostics& d) {
         DevSessionRequest request;
         request.target = target;
         request.dir = "work";
         return dev_session(request, out, d);
       }},
      {"results", [&](std::ostream& out, Diagnostics& d) {
         ResultsRequest request;
         request.env = "ml-dev-env";
         return show_results(request, out, d);
       }}};
  setenv("MLENV_FAKE_SERVER", "https://api.staging.example.com:6443", 1);
  for (const auto& [name, command] : commands) {
    INFO(name);
    CHECK(f.day2(command) == 1);
    CHECK(f.commands() == std::vector<std::string>{"oc whoami --show-server"});
    CHECK(f.err.find("error[E0719]: the client's current server is `api.staging.example.com`, "
                     "not `api.barcelona.example.com`, the `api` of the cluster of "
                     "`barcelona/ml-dev-env`") != std::string::npos);
    CHECK(f.err.find("= note: nothing was run on the cluster") != std::string::npos);
  }
  // The cluster's own server: the command goes on, the client asked once.
  setenv("MLENV_FAKE_SERVER", "https://API.barcelona.example.com", 1);
  REQUIRE(f.day2(commands[0].second) == 0);
  CHECK(f.commands() ==
        std::vector<std::string>{
            "oc whoami --show-server", kPods,
            "oc exec -n nccl-test ml-dev-env-0 -c mlenv -- cat /run/mlenv/status.json",
            "oc get builds -n nccl-test -l openshift.io/build-config.name=ml-dev-env "
            "-o json",
            "oc get routes -n nccl-test -l app.kubernetes.io/instance=ml-dev-env -o "
            "json"});
  // A rank that does not exist is still refused before any client call.
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) {
    return open_shell({target, 7, false}, d);
  }) == 1);
  CHECK(f.err.find("[E0751]") != std::string::npos);
  CHECK(f.commands().empty());
}

TEST_CASE("day2: an unknown, ambiguous or unapplied env is refused before any client call",
          "[day2]") {
  Day2Fixture f("per_pod", false);
  auto urls = [](const std::string& env) {
    return [env](std::ostream& out, Diagnostics& d) { return show_urls({env, "", 60}, out, d); };
  };
  CHECK(f.day2(urls("ml-dev-env")) == 1);
  CHECK(f.err ==
        "mlenvc: error[E0750]: `barcelona/ml-dev-env` is not applied\n"
        "   = apply it first: `mlenvc apply`\n");
  CHECK(f.day2(urls("trainer")) == 1);
  CHECK(f.err.find("error[E0715]: no committed plan has env `trainer`") != std::string::npos);
  // The same env name on a second cluster: CLUSTER/ENV tells them apart.
  FakeEnv twin = f.env;
  twin.cluster = "madrid";
  f.others = {twin};
  f.commit_plan();
  CHECK(f.day2(urls("ml-dev-env")) == 1);
  CHECK(f.err.find("error[E0715]: env `ml-dev-env` is planned on more than one cluster") !=
        std::string::npos);
  CHECK(f.err.find("`barcelona/ml-dev-env`") != std::string::npos);
  CHECK(f.err.find("`madrid/ml-dev-env`") != std::string::npos);
  CHECK(f.day2(urls("madrid/ml-dev-env")) == 1);
  CHECK(f.err.find("error[E0750]: `madrid/ml-dev-env` is not applied") != std::string::npos);
  CHECK(f.commands().empty());
}

TEST_CASE("golden E0750 E0751 E0752 E0753 E0754: the day-2 commands", "[golden]") {
  Day2Fixture unapplied("per_pod", false);
  CHECK(unapplied.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ml-dev-env", "", 60}, out, d);
  }) == 1);
  golden("E0750", unapplied.err);

  Day2Fixture f;
  ShellRequest shell;
  shell.target = {"ml-dev-env", "", 60};
  shell.rank = 5;
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(shell, d); }) == 1);
  golden("E0751", f.err);
  shell.rank = 1;
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(shell, d); }) == 1);
  golden("E0752", f.err);
  PortForwardRequest forward;
  forward.target = {"ml-dev-env", "", 60};
  forward.service = "tensorboard";
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return port_forward(forward, d); }) == 1);
  golden("E0753", f.err);
  SyncRequest sync;
  sync.target = {"ml-dev-env", "", 60};
  sync.dir = "no/such/dir";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return sync_workspace(sync, out, d); }) ==
        1);
  golden("E0754", f.err);
}

// A Slurm env applied through stand-ins for Slurm's clients (the recording client under their
// names): sbatch answers job 42 (sbatch(1) --parsable prints the id alone), squeue the state
// and node list recorded on tests/slurm/cluster.sh (`RUNNING|None|n[1-2]`), scontrol the nodes
// of that list one a line. The real clients are tests/slurm/day2.sh's (ctest slurm.day2).
struct SlurmDay2Fixture : Day2Fixture {
  SlurmDay2Fixture() : Day2Fixture("per_pod", false) {
    for (const char* client : {"sbatch", "squeue", "scontrol", "srun", "scancel"})
      std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, dir.path() + "/.bin/" + client);
    env = FakeEnv();
    env.cluster = "lab";
    env.env = "ranks";
    env.platform = "slurm";
    env.env_kind = "run";
    env.files = {{"ranks.sbatch", "#!/bin/bash\n"}, {"boot.json", "{}"}};
    env.actions = {R"({"action": "submit", "after": "", "script": "ranks.sbatch"})"};
    env.more_keys = {"\"nodes\": 2"};
    commit_plan();
    write_file(dir.path() + "/.squeue", "RUNNING|None|n[1-2]\n");
    write_file(dir.path() + "/.hostnames", "n1\nn2\n");
    reply({"--parsable|0|42", "-j 42|0|@" + dir.path() + "/.squeue",
           "hostnames|0|@" + dir.path() + "/.hostnames"},
          true);
    REQUIRE(apply() == 0);
  }
};

TEST_CASE("apply: a Slurm job runs the boot.json apply checked, not a later plan's", "[apply]") {
  SlurmDay2Fixture f;
  const std::string dir = f.dir.path() + "/plans/lab/ranks/";
  const std::string blob = rev_parse(f.dir.path(), "HEAD:plans/lab/ranks/boot.json");
  const std::string pinned = "logs/.applied/boot-" + blob + ".json";
  // sbatch gets the copy as the script's argument; the script reads it when the job starts.
  bool passed = false;
  for (const std::string& command : f.commands())
    passed = passed || command ==
                           "sbatch --parsable --chdir=$TMP/plans/lab/ranks "
                           "$TMP/plans/lab/ranks/ranks.sbatch " +
                               pinned;
  CHECK(passed);
  CHECK(read_file(dir + pinned) == "{}");
  // A later plan rewrites boot.json while the job waits in the queue: its copy stays.
  write_file(dir + "boot.json", "{\"nnodes\": 64}");
  CHECK(read_file(dir + pinned) == "{}");
}

TEST_CASE("day2: a Slurm env's status is its job's state and each rank's node", "[day2]") {
  SlurmDay2Fixture f;
  REQUIRE(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ranks", "", 60}, out, d);
  }) == 0);
  CHECK(f.out ==
        "lab/ranks (Slurm job 42, run, 2 nodes)\n"
        "  RANK  NODE  STATE\n"
        "  0     n1    RUNNING\n"
        "  1     n2    RUNNING\n"
        "  log: " +
            f.dir.path() + "/plans/lab/ranks/logs/ranks-42.out\n");
  CHECK(f.commands() == std::vector<std::string>{"squeue -h -t all -j 42 -o %T|%r|%N",
                                                 "scontrol show hostnames n[1-2]"});
}

TEST_CASE("day2: a Slurm env's logs are its job's files, each line under its rank", "[day2]") {
  SlurmDay2Fixture f;
  // srun --label's lines (`0: `), and one of the batch script's own.
  write_file(f.dir.path() + "/plans/lab/ranks/logs/ranks-42.out",
             "1: up on n2\n0: up on n1\n0: MLENV_RESULTS {}\n");
  write_file(f.dir.path() + "/plans/lab/ranks/logs/ranks-42.err",
             "1: warning\nslurmstepd: error: *** JOB 42 CANCELLED ***\n");
  LogsRequest request;
  request.target = {"ranks", "", 60};
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  CHECK(f.out ==
        "[0] up on n1\n[0] MLENV_RESULTS {}\n[1] up on n2\n[1] warning\n"
        "[job] slurmstepd: error: *** JOB 42 CANCELLED ***\n");
  request.rank = 1;
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  CHECK(f.out == "[1] up on n2\n[1] warning\n");
  request.rank = 2;
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) == 1);
  CHECK(f.err.find("error[E0751]: `lab/ranks` has no rank 2") != std::string::npos);
}

TEST_CASE("day2: a destroyed Slurm env's logs and results are still its job's files", "[day2]") {
  // `destroy` cancels the job and records the env destroyed (a record with no plan whose parent
  // is the last apply's, compiler/apply/records.cc); the job's files stay in the env directory.
  SlurmDay2Fixture f;
  f.env.env_kind = "acceptance";
  f.commit_plan();
  const std::string logs = f.dir.path() + "/plans/lab/ranks/logs/";
  write_file(logs + "ranks-42.out", "0: trained\n1: trained\n");
  write_file(logs + "ranks-42.results.json",
             "{\"format_version\": 1, \"job\": \"lab/ranks\", \"status\": \"passed\", "
             "\"nnodes\": 2, \"world_size\": 2, \"rows\": [{\"bytes\": 8}]}\n");
  {
    ChangeDir in(f.dir.path());
    std::ostringstream out;
    Diagnostics d;
    DestroyRequest destroy;
    destroy.env = "ranks";
    REQUIRE(destroy_env(destroy, out, d) == 0);
  }
  CHECK(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_status({"ranks", "", 60}, out, d);
  }) == 1);
  CHECK(f.err.find("error[E0750]: `lab/ranks` is not applied") != std::string::npos);
  LogsRequest request;
  request.target = {"ranks", "", 60};
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  CHECK(f.out == "[0] trained\n[1] trained\n");
  ResultsRequest results;
  results.env = "ranks";
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) {
    return show_results(results, out, d);
  }) == 0);
  CHECK(f.out.find("PASSED") != std::string::npos);
  // Its files gone too: the logs say the env was destroyed before its job wrote one.
  std::filesystem::remove(logs + "ranks-42.out");
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) == 1);
  CHECK(f.err.find("error[E0752]: Slurm job 42 of `lab/ranks` has written no log: no `") !=
        std::string::npos);
  CHECK(f.err.find("the env was destroyed before its job wrote one") != std::string::npos);
}

TEST_CASE("day2: a destroyed env's pod logs are gone with it (E0750)", "[day2]") {
  Day2Fixture f("per_pod", false);
  std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, f.dir.path() + "/.bin/podman");
  make_kubernetes_run(f);
  REQUIRE(f.apply() == 0);
  {
    ChangeDir in(f.dir.path());
    std::ostringstream out;
    Diagnostics d;
    DestroyRequest destroy;
    destroy.env = "ml-dev-env";
    REQUIRE(destroy_env(destroy, out, d) == 0);
  }
  LogsRequest request;
  request.target = {"ml-dev-env", "", 60};
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) == 1);
  CHECK(f.err.find("error[E0750]: `barcelona/ml-dev-env` is not applied: it was destroyed") !=
        std::string::npos);
  CHECK(f.commands().empty());  // no client asked for pods that are gone
}

TEST_CASE("day2: a Slurm env's logs are streamed, and only regular files are read", "[day2]") {
  SlurmDay2Fixture f;
  const std::string logs = f.dir.path() + "/plans/lab/ranks/logs/";
  // 4 MiB of lines, read in 1 MiB chunks: lines that cross a chunk's end stay whole.
  std::string big;
  for (int i = 0; big.size() < (std::size_t{4} << 20); ++i)
    big += std::to_string(i % 2) + ": line " + std::to_string(i) + "\n";
  write_file(logs + "ranks-42.out", big);
  // The error log is a FIFO nobody writes: before, reading it blocked forever.
  REQUIRE(mkfifo((logs + "ranks-42.err").c_str(), 0600) == 0);
  LogsRequest request;
  request.target = {"ranks", "", 60};
  request.rank = 1;
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  std::size_t lines = static_cast<std::size_t>(std::count(big.begin(), big.end(), '\n'));
  CHECK(static_cast<std::size_t>(std::count(f.out.begin(), f.out.end(), '\n')) == lines / 2);
  CHECK(f.out.starts_with("[1] line 1\n[1] line 3\n"));
  // A log linked to /dev/zero: before, read until memory ran out.
  std::filesystem::remove(logs + "ranks-42.out");
  std::filesystem::create_symlink("/dev/zero", logs + "ranks-42.out");
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) { return show_logs(request, out, d); }) ==
          0);
  CHECK(f.out.empty());
}

TEST_CASE("day2: a Slurm env's shell is a step of its running job on the rank's node", "[day2]") {
  SlurmDay2Fixture f;
  ShellRequest shell;
  shell.target = {"ranks", "", 60};
  shell.rank = 1;
  REQUIRE(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(shell, d); }) == 0);
  CHECK(f.commands().back() ==
        "srun --jobid=42 --overlap --nodes=1 --ntasks=1 --nodelist=n2 bash -l");
  write_file(f.dir.path() + "/.squeue", "PENDING|Resources|\n");
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return open_shell(shell, d); }) == 1);
  CHECK(f.err.find("error[E0752]: rank 1 of `lab/ranks` (Slurm job 42) is PENDING (Resources), "
                   "not running") != std::string::npos);
}

TEST_CASE("day2: a Slurm env's results are rank 0's results.json beside the job's logs", "[day2]") {
  SlurmDay2Fixture f;
  f.env.env_kind = "acceptance";
  f.commit_plan();
  ResultsRequest request;
  request.env = "ranks";
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return show_results(request, out, d); }) ==
        1);
  CHECK(f.err.find("error[E0716]: no result of `lab/ranks` yet") != std::string::npos);
  CHECK(
      f.err.find("Slurm job 42 has written no `$TMP/plans/lab/ranks/logs/ranks-42.results.json`") !=
      std::string::npos);
  // mlenv-boot writes results.json pretty-printed (runtime/nccl_check.cc, publish_results).
  write_file(f.dir.path() + "/plans/lab/ranks/logs/ranks-42.results.json",
             "{\n  \"format_version\": 1,\n  \"job\": \"lab/ranks\",\n  \"status\": "
             "\"passed\",\n  \"nnodes\": 2,\n  \"world_size\": 2,\n  \"min_busbw_gbps\": 1,\n"
             "  \"avg_busbw_gbps\": 2.5,\n  \"rows\": [{\"bytes\": 1024, \"time_us\": 10, "
             "\"algbw_gbps\": 2, \"busbw_gbps\": 2.5}]\n}\n");
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) {
    return show_results(request, out, d);
  }) == 0);
  CHECK(f.out.find("PASSED") != std::string::npos);
  request.json = true;
  REQUIRE(f.day2([&](std::ostream& out, Diagnostics& d) {
    return show_results(request, out, d);
  }) == 0);
  CHECK(f.out.starts_with("{\n  \"format_version\": 1,\n"));
}

TEST_CASE("golden E0755: sync, port-forward and urls of a Slurm env", "[golden]") {
  SlurmDay2Fixture f;
  SyncRequest sync;
  sync.target = {"ranks", "", 60};
  sync.dir = f.dir.path();
  CHECK(f.day2([&](std::ostream& out, Diagnostics& d) { return sync_workspace(sync, out, d); }) ==
        1);
  golden("E0755", f.err);
  PortForwardRequest forward;
  forward.target = {"ranks", "", 60};
  CHECK(f.day2([&](std::ostream&, Diagnostics& d) { return port_forward(forward, d); }) == 1);
  CHECK(f.err.find("error[E0755]: `mlenvc port-forward`") != std::string::npos);
  CHECK(f.day2([](std::ostream& out, Diagnostics& d) {
    return show_urls({"ranks", "", 60}, out, d);
  }) == 1);
  CHECK(f.err.find("error[E0755]: `mlenvc urls`") != std::string::npos);
  CHECK(f.commands().empty());
}

}  // namespace
}  // namespace mlenv::plan::day2
