#include <catch2/catch.hpp>

#include "targets/kube/builders.h"
#include "targets/openshift/openshift_target.h"
#include "targets/openshift/rules.h"
#include "tests/targets/fixtures.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;

TEST_CASE("E0411: the StatefulSet name and hostnames fit their DNS limits", "[rules]") {
  ir::Env e = dev_env();
  e.name = std::string(53, 'a');
  Diagnostics d;
  render(program_of({e}), d);
  CHECK(has_code(d, Code::E0411));
  e.name = std::string(52, 'a');
  Diagnostics ok;
  render(program_of({e}), ok);
  CHECK_FALSE(has_code(ok, Code::E0411));
}

TEST_CASE("E0412: rails, attachments and VF resources agree", "[rules]") {
  ir::Env e = hkim_env();
  e.cluster.network.rdma->rails[1].network.clear();
  e.cluster.network.rdma->rails[1].resource.clear();
  Diagnostics d;
  render(program_of({e}), d);
  CHECK(has_code(d, Code::E0412));
}

TEST_CASE("E0502: exposed services never without authentication", "[rules]") {
  ir::Env e = dev_env();
  e.auth = ir::Auth::none;
  Diagnostics d;
  render(program_of({e}), d);
  CHECK(has_code(d, Code::E0502));
  e.services.clear();
  Diagnostics ok;
  render(program_of({e}), ok);
  CHECK_FALSE(has_code(ok, Code::E0502));
}

TEST_CASE("E0503: a Route that reaches debugpy is refused", "[rules]") {
  ir::Env e = barcelona_env();
  target::EnvLayout layout = target::make_layout(e);
  std::vector<target::Object> objects = target::openshift::env_objects(
      layout, target::boot_json(layout, target::kube::pod_placement(layout)), {});
  Diagnostics clean;
  target::openshift::check_routes(e, objects, clean);
  CHECK(clean.all().empty());
  // Point the vscode Service at the debugpy port, as a broken builder would.
  for (target::Object& o : objects) {
    if (o.kind == "Service" && o.name == "ml-dev-env-vscode") {
      *o.body.find("spec")->find("ports")->items()[0].find("targetPort") = target::Value("debugpy");
    }
  }
  Diagnostics d;
  target::openshift::check_routes(e, objects, d);
  CHECK(has_code(d, Code::E0503));
}

TEST_CASE("E0504: base images are pinned by tag or digest", "[rules]") {
  for (const char* from :
       {"nvcr.io/nvidia/pytorch", "nvcr.io/nvidia/pytorch:latest", "localhost:5000/pytorch"}) {
    INFO(from);
    ir::Env e = dev_env();
    e.image.from = from;
    Diagnostics d;
    render(program_of({e}), d);
    CHECK(has_code(d, Code::E0504));
  }
  for (const char* from : {"nvcr.io/nvidia/pytorch:25.09-py3", "localhost:5000/pytorch:1.0",
                           "nvcr.io/nvidia/pytorch@sha256:0123abcd"}) {
    INFO(from);
    ir::Env e = dev_env();
    e.image.from = from;
    Diagnostics d;
    render(program_of({e}), d);
    CHECK_FALSE(has_code(d, Code::E0504));
  }
}

TEST_CASE("every target code has a summary and a long explanation", "[rules]") {
  for (Code c : {Code::E0411, Code::E0412, Code::E0502, Code::E0503, Code::E0504}) {
    const CodeInfo& info = code_info(c);
    CHECK(!info.summary.empty());
    CHECK(info.explanation.size() > 200);
  }
}
