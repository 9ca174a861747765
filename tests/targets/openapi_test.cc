#include <catch2/catch.hpp>
#include <chrono>
#include <iostream>

#include "tests/targets/fixtures.h"
#include "tests/targets/schemas.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;

TEST_CASE("every emitted object validates strictly against the shared schemas", "[openapi]") {
  std::string why;
  auto start = std::chrono::steady_clock::now();
  const openapi::Validator* v = shared_validator(why);
  if (!v) FAIL(why);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  std::cout << "parsed the shared OpenAPI documents in " << ms << " ms\n";
  std::size_t validated = 0;
  std::vector<std::pair<std::string, ir::Program>> programs = all_fixtures();
  programs.emplace_back("fleet", fleet(4, 2));
  for (auto& [name, program] : programs) {
    Diagnostics d;
    target::Output out = render(program, d);
    for (std::size_t i : out.stream) {
      const target::File& f = out.files[i];
      INFO(f.path);
      for (const openapi::Issue& issue : v->validate_text(f.content)) {
        FAIL_CHECK(issue.path + ": " + issue.message);
      }
      ++validated;
    }
  }
  CHECK(validated > 40);
}

TEST_CASE("the validator is strict", "[openapi]") {
  std::string why;
  const openapi::Validator* v = shared_validator(why);
  if (!v) FAIL(why);
  auto issues = [&](const char* yaml) { return v->validate_text(yaml).size(); };
  CHECK(issues("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n") == 0);
  CHECK(issues("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n  nmae: b\n") == 1);
  CHECK(issues("apiVersion: v1\nkind: ServiceAccount\nautomountServiceAccountToken: \"x\"\n"
               "metadata:\n  name: a\n") == 1);
  CHECK(issues("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports:\n"
               "  - port: \"80\"\n") == 1);  // a quoted number is a string
  CHECK(issues("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports:\n"
               "  - port: 80\n    targetPort: http\n") == 0);  // int-or-string
  CHECK(issues("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports:\n"
               "  - targetPort: 80\n") == 1);  // required port
  CHECK(issues("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: a\nspec:\n"
               "  resources:\n    requests:\n      storage: 10GB\n") == 1);  // not a quantity
  CHECK(issues("apiVersion: route.openshift.io/v1\nkind: Route\nmetadata:\n  name: a\nspec:\n"
               "  to:\n    kind: Service\n    name: a\n  tls:\n    termination: edge\n    "
               "keyy: x\n") == 1);  // found by name: OpenShift's document has no GVK extension
  CHECK(issues("apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
               "metadata:\n  name: a\n  labelz: {}\nspec:\n  config: \"{}\"\n") == 1);
  CHECK(issues("apiVersion: example.com/v1\nkind: Unknown\nmetadata:\n  name: a\n") == 1);
}
