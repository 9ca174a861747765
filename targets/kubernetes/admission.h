#pragma once
// The validating admission webhooks' rules that no OpenAPI or CRD schema holds: an object can
// match the JobSet CRD exactly and still be refused at apply by the JobSet controller's or
// Kueue's webhook. Each rule cites the upstream function it mirrors; the Kubernetes provider
// hands them to the Validator (Provider::admission_rules), which runs them after the schema,
// so every test that validates emitted objects also checks admission.

#include <vector>

#include <yaml-cpp/yaml.h>

#include "targets/common/openapi.h"

namespace mlenv::target::kubernetes {

/// What the JobSet webhook (kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go,
/// ValidateCreate) and Kueue's webhooks (kubernetes-sigs/kueue
/// pkg/controller/jobframework/validation.go and tas_validation.go) would refuse in `object`.
std::vector<openapi::Issue> admission_issues(const YAML::Node& object);

}  // namespace mlenv::target::kubernetes
