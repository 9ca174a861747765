#include "targets/openshift/day2/routes.h"

#include <algorithm>

namespace mlenv::plan::day2 {

std::optional<std::vector<ExposedUrl>> parse_routes(const std::string& json, std::string& error) {
  try {
    std::vector<ExposedUrl> out;
    for (const YAML::Node& route : cluster_json::items_of(json)) {
      std::string host = cluster_json::text_at(route, {"spec", "host"});
      if (host.empty()) continue;  // not admitted yet: the router assigns the host
      const bool tls = cluster_json::node_at(route, {"spec", "tls"}).has_value();
      out.push_back(
          {cluster_json::text_at(route, {"metadata", "name"}),
           (tls ? "https://" : "http://") + host + cluster_json::text_at(route, {"spec", "path"})});
    }
    std::sort(out.begin(), out.end(),
              [](const ExposedUrl& a, const ExposedUrl& b) { return a.name < b.name; });
    return out;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

std::optional<std::vector<ExposedUrl>> exposed_urls(const Session& session,
                                                    Diagnostics& diagnostics) {
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
