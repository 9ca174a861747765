#pragma once
// A repository with a committed synthetic plan, a bin directory where oc and kubectl are the
// recording stand-in, and helpers to run apply and read what the stand-in saw.

#include <stdlib.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "compiler/apply/apply_session.h"
#include "compiler/diag/render.h"
#include "compiler/plan/change.h"
#include "compiler/plan/plan_session.h"
#include "tests/plan/support.h"

namespace mlenv::plan::testing {

struct ApplyFixture {
  TempDir dir;
  FakeEnv env = typical_env();
  FakeEnv fresh;                ///< what a fresh render produces (env unless a test makes it stale)
  std::vector<FakeEnv> others;  ///< more envs of the same source, planned and applied with env
  std::string log;
  std::string replies;
  std::string saved_path;
  PlanDiff planned;  ///< what the last commit_plan planned: apply must do exactly that

  ApplyFixture() {
    init_repo(dir.path());
    log = dir.path() + "/.fake-log";
    std::filesystem::create_directories(dir.path() + "/.bin");
    std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, dir.path() + "/.bin/oc");
    std::filesystem::create_symlink(MLENV_FAKE_KUBECTL, dir.path() + "/.bin/kubectl");
    saved_path = getenv("PATH");
    setenv("PATH", (dir.path() + "/.bin:" + saved_path).c_str(), 1);
    setenv("MLENV_FAKE_LOG", log.c_str(), 1);
    replies = dir.path() + "/.fake-replies";
    setenv("MLENV_FAKE_REPLIES", replies.c_str(), 1);
    reply({"get namespace|0|namespace/nccl-test", "auth can-i|0|yes",
           std::string("get istag|0|") + kDigest, "get job|0|Complete"});
    commit_plan();
  }
  ~ApplyFixture() {
    setenv("PATH", saved_path.c_str(), 1);
    for (const char* name :
         {"MLENV_FAKE_LOG", "MLENV_FAKE_FAIL", "MLENV_FAKE_SLEEP", "MLENV_FAKE_SLEEP_ON",
          "MLENV_FAKE_PIDS", "MLENV_FAKE_WRITE", "MLENV_FAKE_WRITE_VALUE", "MLENV_FAKE_REPLIES",
          "MLENV_FAKE_DIGEST", "MLENV_FAKE_SERVER", "MLENV_FAKE_API", "MLENV_FAKE_STATE",
          "MLENV_FAKE_BUILDS"}) {
      unsetenv(name);
    }
  }

  /// The digest reference the stand-in's ImageStreamTag holds.
  static constexpr const char* kDigest =
      "image-registry.openshift-image-registry.svc:5000/nccl-test/ml-dev-env@sha256:"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

  /// Sets the stand-in's answers (`PATTERN|STATUS|OUTPUT`, first match wins); `first` ones are
  /// tried before the current ones.
  void reply(const std::vector<std::string>& lines, bool first = false) {
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    write_file(replies, first ? text + read_file(replies) : text);
  }

  /// Plans `env` and commits it, as `mlenvc plan` does; the fresh render follows.
  void commit_plan() {
    fresh = env;
    ChangeDir in(dir.path());
    Diagnostics diagnostics;
    auto session = PlanSession::open("", diagnostics);
    std::vector<FakeEnv> all = others;
    all.insert(all.begin(), env);
    auto diff = session->diff(tree_from_output(render(all)), env.source, diagnostics);
    planned = diff ? *diff : PlanDiff();
    if (diff && !diff->empty()) session->commit("plan\n", diagnostics);
    session->write_worktree(true, diagnostics);
  }

  /// Runs apply from the repository root; returns the exit status, stdout in `out`, rendered
  /// diagnostics in `err`.
  int apply(ApplyRequest request = {}) {
    ChangeDir in(dir.path());
    std::filesystem::remove(log);
    write_file(log, "");
    if (!request.render) {
      request.render = [this](const std::string&, Diagnostics&) {
        std::vector<FakeEnv> all = others;
        all.insert(all.begin(), fresh);
        return std::optional(testing::render(all));
      };
    }
    std::ostringstream stdout_text;
    Diagnostics diagnostics;
    int status = apply_plans(request, stdout_text, diagnostics);
    out = stdout_text.str();
    std::ostringstream stderr_text;
    SourceManager none;
    for (const Diagnostic& d : diagnostics.all()) render_text(stderr_text, none, d);
    err = stderr_text.str();
    std::string prefix = dir.path();
    for (std::size_t at; (at = err.find(prefix)) != std::string::npos;)
      err.replace(at, prefix.size(), "$TMP");
    for (std::size_t at; (at = out.find(prefix)) != std::string::npos;)
      out.replace(at, prefix.size(), "$TMP");
    return status;
  }

  /// The `argv:` lines the stand-in recorded, without the stdin lines.
  std::vector<std::string> commands() const {
    std::vector<std::string> lines;
    std::istringstream in(read_file(log));
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("argv: ")) continue;
      for (std::size_t at; (at = line.find(dir.path())) != std::string::npos;)
        line.replace(at, dir.path().size(), "$TMP");
      // A build's context is a fresh temporary directory (compiler/apply/build_context.h).
      line = std::regex_replace(line, std::regex("[^ =]*/mlenv-build-[A-Za-z0-9]{6}"), "$CONTEXT");
      lines.push_back(line.substr(6));
    }
    return lines;
  }

  std::string out;
  std::string err;
};

// The typical env as the Kubernetes target plans a run: no OpenShift objects, a push of the
// image after the ServiceAccount and a JobSet waited for until it completes.
inline void make_kubernetes_run(ApplyFixture& f) {
  std::vector<FakeObject> kept;
  for (FakeObject& o : f.env.objects) {
    if (o.kind == "ServiceAccount" || o.kind == "ConfigMap" || o.kind == "Service")
      kept.push_back(o);
  }
  kept.push_back(
      {"jobset.x-k8s.io/v1alpha2", "JobSet", "trainer",
       "spec:\n  replicatedJobs:\n  - name: node\n    template:\n      spec:\n"
       "        template:\n          spec:\n            containers:\n"
       "            - name: mlenv\n              image: registry.example.com/ml/trainer:v1\n",
       7, false});
  f.env.objects = kept;
  f.env.platform = "kubernetes";
  setenv("MLENV_FAKE_API", "kubernetes", 1);  // the cluster serves none of OpenShift's kinds
  f.env.env_kind = "run";
  f.env.secrets.clear();
  f.env.grants.clear();
  f.env.actions = {
      "{\"action\": \"push\", \"after\": \"ServiceAccount/ml-dev-env-sa\", "
      "\"image\": \"registry.example.com/ml/trainer:v1\", "
      "\"dockerfile\": \"barcelona/ml-dev-env/Dockerfile\"}",
      "{\"action\": \"complete\", \"after\": \"JobSet/trainer\"}"};
  f.commit_plan();
}

// The typical env as the Kubernetes target plans a dev env: its StatefulSet runs the image it
// pushes to `image.registry`, and apply waits for its rollout.
inline void make_kubernetes_dev(ApplyFixture& f) {
  std::vector<FakeObject> kept;
  for (FakeObject& o : f.env.objects) {
    if (o.kind == "ServiceAccount" || o.kind == "ConfigMap" || o.kind == "StatefulSet")
      kept.push_back(o);
  }
  FakeObject& statefulset = kept.back();
  const std::size_t image = statefulset.body.find(kTypicalImage);
  statefulset.body.replace(image, std::string(kTypicalImage).size(),
                           "registry.example.com/ml/trainer:v1");
  f.env.objects = kept;
  f.env.platform = "kubernetes";
  setenv("MLENV_FAKE_API", "kubernetes", 1);  // the cluster serves none of OpenShift's kinds
  f.env.secrets.clear();
  f.env.grants.clear();
  f.env.actions = {
      "{\"action\": \"push\", \"after\": \"ServiceAccount/ml-dev-env-sa\", "
      "\"image\": \"registry.example.com/ml/trainer:v1\", "
      "\"dockerfile\": \"barcelona/ml-dev-env/Dockerfile\"}",
      "{\"action\": \"rollout\", \"after\": \"StatefulSet/ml-dev-env\"}"};
  f.commit_plan();
}

}  // namespace mlenv::plan::testing
