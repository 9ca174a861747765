#include "platforms/openshift/day2/routes.h"

namespace mlenv::plan::day2 {

std::optional<std::vector<ExposedUrl>> exposed_urls(const Session& session,
                                                    Diagnostics& diagnostics) {
  // Only the OpenShift target exposes services today, through Routes; a Kubernetes target's
  // Ingresses would be read here.
  std::optional<std::string> json = session.capture(
      {"get", "routes", "-n", session.namespace_(), "-l", session.selector(), "-o", "json"},
      diagnostics);
  if (!json) return std::nullopt;
  std::string error;
  std::optional<std::vector<ExposedUrl>> urls = parse_routes(*json, error);
  if (!urls) {
    diagnostics.report(Code::E0706, {},
                       "the Routes of `" + session.env().unit + "` are unreadable: " + error);
  }
  return urls;
}

}  // namespace mlenv::plan::day2
