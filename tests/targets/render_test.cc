#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "targets/common/env_layout.h"
#include "tests/targets/fixtures.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;

namespace {

bool is_object_file(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".yaml") == 0 &&
         path.find("kustomization.yaml") == std::string::npos;
}

}  // namespace

TEST_CASE("every fixture renders without diagnostics, deterministically", "[render]") {
  for (auto& [name, program] : all_fixtures()) {
    INFO(name);
    Diagnostics d1, d2;
    target::Output a = render(program, d1);
    target::Output b = render(program, d2);
    CHECK(d1.all().empty());
    REQUIRE(a.files.size() == b.files.size());
    for (std::size_t i = 0; i < a.files.size(); ++i) {
      CHECK(a.files[i].path == b.files[i].path);
      CHECK(a.files[i].content == b.files[i].content);
      if (i > 0) CHECK(a.files[i - 1].path < a.files[i].path);
    }
    CHECK(a.stream == b.stream);
  }
}

TEST_CASE("the objects scope gives the tree's objects and stream, and nothing else", "[render]") {
  for (auto& [name, program] : all_fixtures()) {
    INFO(name);
    Diagnostics d1, d2;
    target::Output tree = render(program, d1, target::Scope::Tree);
    target::Output objects = render(program, d2, target::Scope::Objects);
    CHECK(d2.all().size() == d1.all().size());
    CHECK(objects.notes == tree.notes);
    REQUIRE(objects.stream.size() == tree.stream.size());
    REQUIRE(objects.files.size() == objects.stream.size());
    for (std::size_t i = 0; i < tree.stream.size(); ++i) {
      const target::File& a = tree.files[tree.stream[i]];
      const target::File& b = objects.files[objects.stream[i]];
      CHECK(a.path == b.path);
      CHECK(a.content == b.content);
    }
  }
}

TEST_CASE("the streamed objects are the objects render's stream, byte for byte", "[render]") {
  std::vector<std::pair<std::string, ir::Program>> programs = all_fixtures();
  // More envs than one batch of the stream, clusters sharing namespaces (their attachments are
  // shared objects) and each cluster's SCC and grants: the admin pass and the merge.
  programs.emplace_back("fleet", fleet(600, 7));
  // OpenShift envs beside Kubernetes ones: the stream of each platform's part in turn.
  ir::Program mixed = fleet(40, 4);
  for (std::size_t i = 0; i < mixed.envs.size(); i += 3) {
    ir::Env& env = mixed.envs[i];
    env.cluster.platform = ir::Platform::kubernetes;
    env.cluster.name += "-k";
    env.cluster.security.scc.clear();
    env.image.registry = "registry.example.com/ml";
  }
  programs.emplace_back("mixed", std::move(mixed));
  for (auto& [name, program] : programs) {
    INFO(name);
    Diagnostics d1, d2;
    target::Output objects = render(program, d1, target::Scope::Objects);
    std::vector<target::File> streamed;
    std::vector<std::string> notes = target::make_program_target()->stream(
        program, d2, [&](const target::File& f) { streamed.push_back(f); });
    CHECK_FALSE(d1.has_errors());
    CHECK(d2.all().size() == d1.all().size());
    CHECK(notes == objects.notes);
    REQUIRE(streamed.size() == objects.stream.size());
    for (std::size_t i = 0; i < streamed.size(); ++i) {
      INFO(i);
      CHECK(streamed[i].path == objects.files[objects.stream[i]].path);
      CHECK(streamed[i].content == objects.files[objects.stream[i]].content);
    }
  }
}

TEST_CASE("each env directory holds the emitted tree of product.md", "[render]") {
  Diagnostics d;
  target::Output out = render(program_of({barcelona_env()}), d);
  for (const char* f : {"barcelona/ml-dev-env/Dockerfile", "barcelona/ml-dev-env/boot.json",
                        "barcelona/ml-dev-env/plan.json", "barcelona/ml-dev-env/kustomization.yaml",
                        "barcelona/ml-dev-env/statefulset-ml-dev-env.yaml",
                        "barcelona/ml-dev-env/service-ml-dev-env-headless.yaml",
                        "barcelona/ml-dev-env/serviceaccount-ml-dev-env-sa.yaml",
                        "barcelona/_admin/role-ml-dev-env-use-scc.yaml",
                        "barcelona/_admin/rolebinding-ml-dev-env-use-scc.yaml",
                        "barcelona/ml-dev-env/configmap-ml-dev-env-boot.yaml",
                        "barcelona/ml-dev-env/imagestream-ml-dev-env-e343f8.yaml",
                        "barcelona/ml-dev-env/buildconfig-ml-dev-env-e343f8.yaml",
                        "barcelona/ml-dev-env/route-ml-dev-env-vscode.yaml",
                        "barcelona/ml-dev-env/networkpolicy-ml-dev-env.yaml",
                        "barcelona/_admin/securitycontextconstraints-mlenv-ipc-lock.yaml",
                        "barcelona/_admin/kustomization.yaml", "_runtime/CMakeLists.txt"}) {
    INFO(f);
    CHECK(find_file(out, f) != nullptr);
  }
  // The stream starts with the cluster-scoped SCC and ends with the NetworkPolicy.
  REQUIRE(!out.stream.empty());
  CHECK(out.files[out.stream.front()].path.find("_admin/") != std::string::npos);
  CHECK(out.files[out.stream.back()].path.find("networkpolicy") != std::string::npos);
  CHECK(!out.notes.empty());
}

TEST_CASE("secure by default: no privilege, only IPC_LOCK, no secret values",
          "[render][security]") {
  for (auto& [name, program] : all_fixtures()) {
    Diagnostics d;
    target::Output out = render(program, d);
    for (const target::File& f : out.files) {
      INFO(f.path);
      CHECK(f.content.find("privileged: true") == std::string::npos);
      CHECK(f.content.find("hostNetwork") == std::string::npos);
      CHECK(f.content.find("hostPath") == std::string::npos);
      CHECK(f.content.find("--cookie-secret=") == std::string::npos);
      CHECK(f.content.find("BEGIN ") == std::string::npos);  // no PEM block
      CHECK(f.content.find("kind: Secret\n") == std::string::npos);
      CHECK(f.content.find("resourceNames:\n    - privileged") == std::string::npos);
      if (!is_object_file(f.path) || f.path.find("_runtime/") == 0) continue;
      YAML::Node o = YAML::Load(f.content);
      if (o["kind"].as<std::string>() != "StatefulSet") continue;
      YAML::Node sts = o["spec"];
      CHECK(sts["persistentVolumeClaimRetentionPolicy"]["whenDeleted"].as<std::string>() ==
            "Retain");
      CHECK(sts["persistentVolumeClaimRetentionPolicy"]["whenScaled"].as<std::string>() ==
            "Retain");
      for (const YAML::Node& c : sts["template"]["spec"]["containers"]) {
        YAML::Node sc = c["securityContext"];
        CHECK(sc["allowPrivilegeEscalation"].as<bool>() == false);
        CHECK(sc["capabilities"]["drop"][0].as<std::string>() == "ALL");
        if (sc["capabilities"]["add"]) {
          CHECK(sc["capabilities"]["add"].size() == 1);
          CHECK(sc["capabilities"]["add"][0].as<std::string>() == "IPC_LOCK");
        }
        CHECK(sc["seccompProfile"]["type"].as<std::string>() == "RuntimeDefault");
        CHECK(c["resources"]["requests"]["cpu"]);
        CHECK(c["resources"]["requests"]["memory"]);
        CHECK(c["resources"]["limits"]["cpu"]);
        CHECK(c["resources"]["limits"]["memory"]);
        CHECK_FALSE(c["resources"]["requests"]["nvidia.com/gpu"]);
      }
      CHECK(sts["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]);
      bool shm = false;
      for (const YAML::Node& v : sts["template"]["spec"]["volumes"]) {
        if (v["name"].as<std::string>() == "dshm") {
          shm = v["emptyDir"]["medium"].as<std::string>() == "Memory";
        }
      }
      CHECK(shm);
    }
  }
}

TEST_CASE("TCP pods fit restricted-v2: no added capability", "[render][security]") {
  Diagnostics d;
  target::Output out = render(program_of({cairo_tcp_env()}), d);
  const target::File* job = find_file(out, "cairo/cairo-train/job-cairo-train.yaml");
  REQUIRE(job);
  CHECK(job->content.find("IPC_LOCK") == std::string::npos);
  CHECK(job->content.find("openshift.io/required-scc: restricted-v2") != std::string::npos);
  // Every authenticated user may use restricted-v2: no grant, no admin objects.
  CHECK(find_file(out, "cairo/_admin/kustomization.yaml") == nullptr);
  CHECK(job->content.find("use-scc") == std::string::npos);
}

TEST_CASE("SR-IOV rails: one attachment, one annotation entry and one VF per rail", "[render]") {
  Diagnostics d;
  target::Output out = render(program_of({hkim_env()}), d);
  CHECK(d.all().empty());
  for (const char* nad :
       {"eno5np0-network", "eno6np0-network", "eno7np0-network", "eno8np0-network"}) {
    CHECK(find_file(out,
                    std::string("barcelona/h-kim/networkattachmentdefinition-") + nad + ".yaml"));
  }
  const target::File* sts = find_file(out, "barcelona/h-kim/job-h-kim.yaml");
  REQUIRE(sts);
  YAML::Node o = YAML::Load(sts->content);
  YAML::Node limits = o["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  CHECK(limits["openshift.io/eno5np0rdma"].as<int>() == 1);
  CHECK(limits["openshift.io/eno8np0rdma"].as<int>() == 1);
  // A named SCC is granted, never emitted.
  CHECK(find_file(out, "barcelona/_admin/kustomization.yaml") == nullptr);
  CHECK(sts->content.find("openshift.io/required-scc: nccl-scc") != std::string::npos);
}

TEST_CASE("an SR-IOV rail's ipam becomes its attachment's CNI ipam", "[render]") {
  ir::Env e = hkim_env();
  e.cluster.network.rdma->rails[0].ipam =
      ir::Ipam{"whereabouts", "192.168.5.0/24", {"192.168.5.1", "192.168.5.250/31"}};
  e.cluster.network.rdma->rails[1].ipam = ir::Ipam{"dhcp", "", {}};
  Diagnostics d;
  target::Output out = render(program_of({e}), d);
  CHECK(d.all().empty());
  auto ipam = [&](const std::string& nad) {
    const target::File* f =
        find_file(out, "barcelona/h-kim/networkattachmentdefinition-" + nad + ".yaml");
    REQUIRE(f);
    return YAML::Load(YAML::Load(f->content)["spec"]["config"].as<std::string>())["ipam"];
  };
  YAML::Node whereabouts = ipam("eno5np0-network");
  CHECK(whereabouts["type"].as<std::string>() == "whereabouts");
  CHECK(whereabouts["range"].as<std::string>() == "192.168.5.0/24");
  REQUIRE(whereabouts["exclude"].size() == 2);
  CHECK(whereabouts["exclude"][1].as<std::string>() == "192.168.5.250/31");
  YAML::Node dhcp = ipam("eno6np0-network");
  CHECK(dhcp["type"].as<std::string>() == "dhcp");
  CHECK_FALSE(dhcp["range"]);
  // Attachments of InfiniBand rails are ib-sriov (no IP needed); existing ones are not emitted.
  e.cluster.network.rdma->rails[2].link_layer = ir::LinkLayer::infiniband;
  e.cluster.network.rdma->rails[2].ipam.reset();
  e.cluster.network.rdma->rails[3].attachment = ir::Attachment::existing;
  e.cluster.network.rdma->rails[3].ipam.reset();
  Diagnostics mixed;
  target::Output other = render(program_of({e}), mixed);
  CHECK(mixed.all().empty());
  const target::File* ib =
      find_file(other, "barcelona/h-kim/networkattachmentdefinition-eno7np0-network.yaml");
  REQUIRE(ib);
  CHECK(YAML::Load(YAML::Load(ib->content)["spec"]["config"].as<std::string>())["type"]
            .as<std::string>() == "ib-sriov");
  CHECK_FALSE(find_file(other, "barcelona/h-kim/networkattachmentdefinition-eno8np0-network.yaml"));
  CHECK(find_file(other, "barcelona/h-kim/job-h-kim.yaml")->content.find("eno8np0-network") !=
        std::string::npos);
}

TEST_CASE("envs of one namespace emit its shared objects byte for byte alike", "[render]") {
  ir::Env a = hkim_env();
  a.image.tools = {};  // the tools come from each env's services
  a.services = {ir::Service::vscode};
  ir::Env b = a;
  b.name = "h-kim-2";
  b.services = {ir::Service::jupyter};
  Diagnostics d;
  target::Output out = render(program_of({a, b}), d);
  CHECK(d.all().empty());
  // The cluster's ServiceAccount and attachments: the same bytes in both env directories,
  // naming neither env, with the OAuth redirects of both.
  for (const char* file :
       {"serviceaccount-h-kim-sa.yaml", "networkattachmentdefinition-eno5np0-network.yaml"}) {
    INFO(file);
    const target::File* first = find_file(out, std::string("barcelona/h-kim/") + file);
    const target::File* second = find_file(out, std::string("barcelona/h-kim-2/") + file);
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->content == second->content);
    CHECK(first->content.find("app.kubernetes.io/instance") == std::string::npos);
  }
  YAML::Node sa =
      YAML::Load(find_file(out, "barcelona/h-kim/serviceaccount-h-kim-sa.yaml")->content);
  const std::string redirect = "serviceaccounts.openshift.io/oauth-redirectreference.";
  CHECK(sa["metadata"]["annotations"][redirect + "h-kim-vscode"]);
  CHECK(sa["metadata"]["annotations"][redirect + "h-kim-2-jupyter"]);
  // The stream (`build -o -`) holds each shared object once.
  std::size_t attachments = 0;
  for (std::size_t i : out.stream) {
    attachments += out.files[i].path.ends_with("networkattachmentdefinition-eno5np0-network.yaml");
  }
  CHECK(attachments == 1);
  // The image is named after its declaration; the tools an env's services add make another
  // image (another Dockerfile), named with a suffix of those tools.
  const std::string vscode = target::image_object_name(a.image, {"code-server"});
  const std::string jupyter = target::image_object_name(a.image, {"jupyter"});
  CHECK(vscode.starts_with(a.image.name + "-"));
  CHECK(vscode.size() == a.image.name.size() + 7);
  CHECK(vscode != jupyter);
  CHECK(target::image_object_name(a.image, {}) == a.image.name);
  // A DNS label for the build objects and a registry path component: lower case, one dash for
  // each run of other characters, at most 40 characters before the suffix.
  ir::Image odd;
  odd.name = "PyTorch_2.9--Team";
  CHECK(target::image_object_name(odd, {}) == "pytorch-2-9-team");
  odd.name = std::string(50, 'x');
  CHECK(target::image_object_name(odd, {}) == std::string(40, 'x'));
  CHECK(target::image_object_name(odd, {"jupyter"}).size() == 47);
  CHECK(find_file(out, "barcelona/h-kim/buildconfig-" + vscode + ".yaml"));
  CHECK(find_file(out, "barcelona/h-kim-2/buildconfig-" + jupyter + ".yaml"));
  CHECK(find_file(out, "barcelona/h-kim-2/imagestream-" + jupyter + ".yaml"));
  CHECK(find_file(out, "barcelona/h-kim/Dockerfile")->content !=
        find_file(out, "barcelona/h-kim-2/Dockerfile")->content);
  const target::File* plan = find_file(out, "barcelona/h-kim-2/plan.json");
  REQUIRE(plan);
  for (const YAML::Node& o : YAML::Load(plan->content)["objects"]) {
    std::string kind = o["kind"].as<std::string>();
    bool shared = kind == "NetworkAttachmentDefinition" || kind == "ServiceAccount" ||
                  kind == "PersistentVolumeClaim" ||               // the cluster's `rwx` claims
                  kind == "ImageStream" || kind == "BuildConfig";  // the image's
    CHECK(o["shared"].as<bool>() == shared);
  }
  // Envs whose Dockerfiles are the same bytes share one image: one BuildConfig and
  // ImageStream, named after it and no env, alike in both env directories (the stream holds
  // each once).
  ir::Env c = a;
  c.name = "h-kim-3";
  Diagnostics same_image;
  target::Output both = render(program_of({a, c}), same_image);
  CHECK(same_image.all().empty());
  CHECK(find_file(both, "barcelona/h-kim/Dockerfile")->content ==
        find_file(both, "barcelona/h-kim-3/Dockerfile")->content);
  for (const std::string kind : {"buildconfig-", "imagestream-"}) {
    const target::File* first = find_file(both, "barcelona/h-kim/" + kind + vscode + ".yaml");
    const target::File* second = find_file(both, "barcelona/h-kim-3/" + kind + vscode + ".yaml");
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->content == second->content);
    CHECK(first->content.find("h-kim-3") == std::string::npos);
    std::size_t streamed = 0;
    for (std::size_t i : both.stream)
      streamed += both.files[i].path.ends_with(kind + vscode + ".yaml");
    CHECK(streamed == 1);
  }

  // Attachments that differ between two clusters on one namespace are refused (E0413).
  b.cluster.name = "barcelona-b";
  b.cluster.network.rdma->rails[0].resource = "openshift.io/other";
  Diagnostics conflict;
  render(program_of({a, b}), conflict);
  CHECK(has_code(conflict, Code::E0413));
}

TEST_CASE("oauth-proxy fronts every exposed tool, routes are reencrypt + Redirect",
          "[render][security]") {
  Diagnostics d;
  target::Output out = render(program_of({barcelona_env()}), d);
  const target::File* sts = find_file(out, "barcelona/ml-dev-env/statefulset-ml-dev-env.yaml");
  REQUIRE(sts);
  CHECK(sts->content.find("--openshift-sar=") != std::string::npos);
  CHECK(sts->content.find("--cookie-secret-file=") != std::string::npos);
  const target::File* route = find_file(out, "barcelona/ml-dev-env/route-ml-dev-env-jupyter.yaml");
  REQUIRE(route);
  CHECK(route->content.find("termination: reencrypt") != std::string::npos);
  CHECK(route->content.find("insecureEdgeTerminationPolicy: Redirect") != std::string::npos);
  const target::File* sa = find_file(out, "barcelona/ml-dev-env/serviceaccount-ml-dev-env-sa.yaml");
  REQUIRE(sa);
  CHECK(
      sa->content.find("serviceaccounts.openshift.io/oauth-redirectreference.ml-dev-env-vscode") !=
      std::string::npos);
  for (const target::File& f : out.files) {
    if (f.path.find("/route-") != std::string::npos) {
      CHECK(f.content.find("debugpy") == std::string::npos);
    }
    if (f.path.find("/service-") != std::string::npos) {
      CHECK(f.content.find("5678") == std::string::npos);
    }
  }
}

TEST_CASE("a fleet rendered in parallel equals its envs rendered one by one", "[render]") {
  ir::Program program = fleet(64, 4);
  Diagnostics d;
  target::Output all = render(program, d);
  REQUIRE(d.all().empty());
  std::vector<std::string> stream_dirs;
  for (std::size_t i : all.stream) {
    const std::string& path = all.files[i].path;
    if (path.find("/_admin/") == std::string::npos) {
      std::string dir = path.substr(0, path.rfind('/'));
      if (stream_dirs.empty() || stream_dirs.back() != dir) stream_dirs.push_back(dir);
    }
  }
  REQUIRE(stream_dirs.size() == program.envs.size());
  for (std::size_t e = 0; e < program.envs.size(); ++e) {
    const ir::Env& env = program.envs[e];
    std::string dir = env.cluster.name + "/" + env.name + "/";
    CHECK(stream_dirs[e] + "/" == dir);  // the stream follows the program's env order
    ir::Program one = program;
    one.envs = {env};
    Diagnostics alone;
    target::Output single = render(one, alone);
    std::size_t compared = 0;
    for (const target::File& f : single.files) {
      if (f.path.rfind(dir, 0) != 0) continue;
      const target::File* same = find_file(all, f.path);
      REQUIRE(same);
      CHECK(same->content == f.content);
      ++compared;
    }
    CHECK(compared > 20);
  }
}

namespace {

// Kubernetes' qualified name: an optional DNS-subdomain prefix and `/`, then a name of at most
// 63 characters (apimachinery validation.IsQualifiedName).
bool is_qualified_name(const std::string& key) {
  static const std::regex kName("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  static const std::regex kPrefix(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  std::size_t slash = key.find('/');
  std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (name.empty() || name.size() > 63 || !std::regex_match(name, kName)) return false;
  if (slash == std::string::npos) return true;
  std::string prefix = key.substr(0, slash);
  return !prefix.empty() && prefix.size() <= 253 && std::regex_match(prefix, kPrefix);
}

void check_keys(const YAML::Node& metadata, const char* field) {
  for (const auto& entry : metadata[field]) {
    std::string key = entry.first.as<std::string>();
    INFO(field << ": " << key);
    CHECK(is_qualified_name(key));
  }
}

}  // namespace

TEST_CASE("every label and annotation key is a valid qualified name", "[render]") {
  std::vector<std::pair<std::string, ir::Program>> programs = all_fixtures();
  // The longest env name E0411 and E0424 allow, exposing every tool through the cluster's
  // account: the Route host label `<env>-tensorboard-h-kim` fits 63 characters.
  ir::Env longest = hkim_env();
  const std::size_t longest_name = 63 - std::string("-tensorboard-").size() - 5;
  longest.name = std::string(longest_name, 'n');
  longest.services = {ir::Service::vscode, ir::Service::jupyter, ir::Service::tensorboard};
  ir::Env other = longest;
  other.name = std::string(longest_name - 1, 'n') + "x";
  programs.emplace_back("longest", program_of({longest, other}));
  for (auto& [name, program] : programs) {
    INFO(name);
    Diagnostics d;
    target::Output out = render(program, d);
    CHECK(d.all().empty());
    std::set<std::string> redirects;
    for (std::size_t i : out.stream) {
      YAML::Node metadata = YAML::Load(out.files[i].content)["metadata"];
      check_keys(metadata, "labels");
      check_keys(metadata, "annotations");
      for (const auto& entry : metadata["annotations"]) {
        std::string key = entry.first.as<std::string>();
        if (key.find("oauth-redirectreference.") != std::string::npos) redirects.insert(key);
      }
    }
    if (name == "longest") CHECK(redirects.size() == 6);  // cut, and still one per Route
  }
}

TEST_CASE("a Route host label over 63 characters is refused, one under is not", "[render]") {
  ir::Env env = hkim_env();
  env.services = {ir::Service::tensorboard};
  env.name = std::string(63 - std::string("-tensorboard-h-kim").size(), 'n');
  Diagnostics fits;
  render(program_of({env}), fits);
  CHECK(fits.all().empty());
  env.name += "n";
  Diagnostics over;
  render(program_of({env}), over);
  REQUIRE(over.all().size() == 1);
  CHECK(over.all()[0].code == Code::E0424);
}

TEST_CASE("the build stage installs its compiler with the base image's package manager",
          "[render]") {
  Diagnostics d;
  target::Output out = render(program_of({dev_env()}), d);
  const target::File* dockerfile = nullptr;
  for (const target::File& f : out.files) {
    if (f.path.ends_with("/Dockerfile")) dockerfile = &f;
  }
  REQUIRE(dockerfile);
  // The RUN instruction that installs cmake and g++, as the shell that runs it sees it.
  std::size_t begin = dockerfile->content.find("RUN if command -v apt-get");
  REQUIRE(begin != std::string::npos);
  std::size_t end = dockerfile->content.find("\n    fi\n", begin);
  REQUIRE(end != std::string::npos);
  std::string script = dockerfile->content.substr(begin + 4, end + 7 - begin - 4);

  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mlenv-stage-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "run.sh") << script;
  auto run = [&](const std::string& tool) {
    fs::remove(dir / "bin" / "dnf");
    fs::remove(dir / "log");
    if (!tool.empty()) {
      std::ofstream(dir / "bin" / tool)
          << "#!/bin/sh\necho \"" << tool << " $*\" > " << (dir / "log").string() << "\n";
      fs::permissions(dir / "bin" / tool, fs::perms::owner_all);
    }
    std::string command = "PATH=" + (dir / "bin").string() + " /bin/sh " +
                          (dir / "run.sh").string() + " 2> " + (dir / "err").string();
    return WEXITSTATUS(std::system(command.c_str()));
  };
  CHECK(run("dnf") == 0);  // RHEL and UBI bases
  std::ifstream log(dir / "log");
  std::string line;
  std::getline(log, line);
  CHECK(line == "dnf install -y cmake gcc-c++ make");
  CHECK(run("") == 1);  // no package manager: a clear failure, not a half-built image
  std::ifstream err(dir / "err");
  std::getline(err, line);
  CHECK(line == "mlenv-boot: the base image has no apt-get, dnf or microdnf");
  fs::remove_all(dir);
}

TEST_CASE("notes are grouped: one line per note, naming the envs it concerns", "[render]") {
  std::vector<ir::Env> envs;
  for (int i = 0; i < 12; ++i) {
    ir::Env e = cairo_tcp_env();
    e.name = std::string(i < 10 ? "run-0" : "run-") + std::to_string(i);
    e.image.name = e.name;
    envs.push_back(std::move(e));
  }
  envs.push_back(barcelona_env());
  envs.push_back(barcelona_env());
  envs.back().name = "second";
  Diagnostics d;
  target::Output out = render(program_of(envs), d);
  REQUIRE(out.notes.size() == 3);
  // Both RDMA envs of barcelona need the same admin objects: said once.
  CHECK(out.notes[2].rfind("the platform team applies barcelona/_admin/ once", 0) == 0);
  CHECK(out.notes[0] ==
        "cairo/run-00, cairo/run-01, cairo/run-02, cairo/run-03, cairo/run-04 and 7 more: "
        "network = auto: cluster `cairo` has no RDMA rails, using TCP");
  CHECK(out.notes[1] ==
        "cairo/run-00, cairo/run-01, cairo/run-02, cairo/run-03, cairo/run-04 and 7 more: "
        "share the claims `cairo-workspace` and `cairo-datasets` of cluster `cairo` in "
        "namespace `nccl-test` (ReadWriteMany); an env's own `storage` block gives it its own");
}

// Docker and buildah join a line ending in `\` with the next and end an instruction at any
// other newline; shell-form RUN hands the joined text to /bin/sh -c.
std::vector<std::string> dockerfile_instructions(const std::string& text) {
  std::string joined;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    joined += text[i];
  }
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = joined.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = joined.substr(start, end - start);
    if (!line.empty() && line[0] != '#') out.push_back(line);
  }
  return out;
}

TEST_CASE("a multi-line run step is one RUN that runs the script byte for byte", "[render]") {
  const std::string script =
      "set -x\n"
      "if [ -n \"$HOME\" ]; then\n"
      "  echo \"it's ${HOME:+set} \\\"q\\\"\" \\\n"
      "    continued\n"
      "fi\n"
      "cat <<EOT\n"
      "heredoc $((1 + 2)) line\n"
      "EOT\n"
      "echo last \\\n"
      "  joined\n";
  ir::Env env = dev_env();
  env.image.run = {"echo one line", script};
  env.image.env = {{"QUOTED", "a \"b\" \\c $HOME ${X}"}, {"PLAIN", "1"}};
  Diagnostics d;
  target::Output out = render(program_of({env}), d);
  const target::File* dockerfile = nullptr;
  for (const target::File& f : out.files) {
    if (f.path.ends_with("/Dockerfile")) dockerfile = &f;
  }
  REQUIRE(dockerfile);
  std::vector<std::string> instructions = dockerfile_instructions(dockerfile->content);
  const std::set<std::string> known = {"FROM", "USER",    "RUN",        "COPY",
                                       "ENV",  "WORKDIR", "ENTRYPOINT", "CMD"};
  std::vector<std::string> runs;
  for (const std::string& line : instructions) {
    std::string word = line.substr(0, line.find(' '));
    INFO(line);
    CHECK(known.count(word) == 1);  // no line of a value became an instruction
    if (word == "RUN") runs.push_back(line.substr(4));
    if (line.starts_with("ENV QUOTED=")) {
      // Dockerfile's lexer inside "..." (moby/buildkit frontend/dockerfile/shell/lex.go): a
      // backslash escapes `"`, itself and `$`, so `$HOME` stays literal; `${X}` alone is left
      // for ENV to expand, as Docker does for `ENV PATH=/opt/venv/bin:${PATH}`.
      CHECK(line == R"(ENV QUOTED="a \"b\" \\c \$HOME ${X}")");
    }
  }
  CHECK(std::count(runs.begin(), runs.end(), "echo one line") == 1);

  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mlenv-run-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "script.sh") << script;
  auto output_of = [&](const std::string& command) {
    std::system((command + " > " + (dir / "out").string() + " 2>&1").c_str());
    std::ifstream in(dir / "out");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string expected = output_of("HOME=/h /bin/sh -e " + (dir / "script.sh").string());
  CHECK(expected.find("heredoc 3 line") != std::string::npos);
  bool found = false;
  for (const std::string& run : runs) {
    if (run.find("printf") == std::string::npos) continue;
    found = true;
    std::ofstream(dir / "run.sh") << run << "\n";
    CHECK(output_of("HOME=/h /bin/sh " + (dir / "run.sh").string()) == expected);
  }
  CHECK(found);
  fs::remove_all(dir);
}

TEST_CASE("a PEP 508 requirement with spaces, quotes or a marker reaches pip as one word",
          "[render]") {
  const std::vector<std::string> requirements = {
      R"(torch==2.5; platform_machine == "x86_64")",
      "mypkg @ git+https://git.example.org/ml/mypkg.git@v1 ; python_version >= '3.10'",
      "numpy >= 1.26, < 2",
      "it's; os_name == \"posix\" and $HOME",
  };
  ir::Env env = dev_env();
  env.image.pip = requirements;
  Diagnostics d;
  target::Output out = render(program_of({env}), d);
  const target::File* dockerfile = nullptr;
  for (const target::File& f : out.files) {
    if (f.path.ends_with("/Dockerfile")) dockerfile = &f;
  }
  REQUIRE(dockerfile);
  std::string install;
  for (const std::string& line : dockerfile_instructions(dockerfile->content)) {
    if (line.find("pip install") != std::string::npos && line.find("mypkg") != std::string::npos)
      install = line.substr(4);
  }
  REQUIRE(!install.empty());
  // Run as RUN runs it (/bin/sh -c), with a `pip` that prints each word it is given.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mlenv-pip-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "run.sh")
      << "pip() { for word in \"$@\"; do printf '%s\\n' \"$word\"; done; }\n"
      << install << "\n";
  std::system(("/bin/sh " + (dir / "run.sh").string() + " > " + (dir / "out").string()).c_str());
  std::ifstream in(dir / "out");
  std::vector<std::string> words;
  for (std::string word; std::getline(in, word);) words.push_back(word);
  std::vector<std::string> expected = {"install", "--no-cache-dir"};
  expected.insert(expected.end(), requirements.begin(), requirements.end());
  CHECK(words == expected);
  fs::remove_all(dir);
}
