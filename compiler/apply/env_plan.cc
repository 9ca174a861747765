#include "compiler/apply/env_plan.h"

namespace mlenv::plan {

std::string shared_key(const PlanObject& object) {
  return object.namespace_ + "/" + object.address;
}

}  // namespace mlenv::plan
