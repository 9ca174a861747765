// Rules on values that reach a Dockerfile, a Linux interface, an IPAM configuration or a
// Kubernetes label: each refuses, at check, what would otherwise break or change the meaning
// of the emitted text. Called once per env from Checker::check_rules.

#include "compiler/check/rules_hygiene.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "compiler/base/pattern.h"
#include "compiler/base/quantity.h"
#include "compiler/check/gpu_products.h"

namespace mlenv::check {
namespace {

const Value* child(const Value* value, const char* name) {
  return value && value->kind == Value::Kind::Block ? value->get(name) : nullptr;
}

bool has_control(std::string_view s, bool allow_newline_and_tab) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto u = static_cast<unsigned char>(s[i]);
    if (allow_newline_and_tab && (s[i] == '\n' || s[i] == '\t')) continue;
    if (u < 0x20 || u == 0x7f) return true;
    // C1 controls too, as printable() escapes them (compiler/diag/render.cc): U+0080..U+009F in
    // UTF-8, or a lone byte 0x80..0x9F, which terminals read as CSI (0x9B) or NEL (0x85) and a
    // batch script then held raw (issue 32, 16a).
    auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (u == 0xc2 && next >= 0x80 && next <= 0x9f) return true;
    if (u >= 0x80 && u <= 0x9f && (i == 0 || static_cast<unsigned char>(s[i - 1]) < 0x80))
      return true;
  }
  return false;
}

// --- The Dockerfile's words (targets/openshift/build.cc) ---------------------------------

// An image reference (distribution/reference's grammar, loosened to its character set): one
// word, because `FROM x AS mlenv-boot` must stay one instruction with its stage name.
const Pattern& image_reference() {
  static const Pattern p = Pattern::literal(R"([A-Za-z0-9][A-Za-z0-9._/:@+-]*)");
  return p;
}
// The repository path of an image reference: without its tag, digest and registry domain (the
// first component when it holds a `.` or `:` or is `localhost`: distribution/reference's
// grammar, reference.go). Only the domain may hold upper-case letters.
std::string repository_path(const std::string& reference) {
  std::string name = reference.substr(0, reference.find('@'));
  std::size_t slash = name.rfind('/');
  std::size_t colon = name.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    name.resize(colon);
  }
  std::size_t first = name.find('/');
  if (first == std::string::npos) return name;
  std::string domain = name.substr(0, first);
  bool is_domain = domain.find_first_of(".:") != std::string::npos || domain == "localhost";
  return is_domain ? name.substr(first + 1) : name;
}

bool has_upper(const std::string& text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A Debian package, optionally with an architecture and a version or release: Debian Policy
// §5.6.1 (names: lower-case letters, digits, `+ - .`, starting alphanumeric) and §5.6.12.
const Pattern& apt_package() {
  static const Pattern p = Pattern::literal(
      R"([a-z0-9][a-z0-9+.-]*(:[a-z0-9-]+)?(=[A-Za-z0-9.+~:_-]+|/[A-Za-z0-9.+~_-]+)?)");
  return p;
}
// A pip requirement as PEP 508 writes it (packaging.python.org, "Dependency specifiers"): a
// name (case-insensitive letters, digits and `._-`, alphanumeric at both ends), optional
// extras, then PEP 440 version clauses (bare or in parentheses) or a direct reference
// (`@ URL`), and an optional environment marker after `;` (after a space, following a URL).
// Printable ASCII only: the Dockerfile single-quotes each requirement as one word of
// `pip install` (targets/common/dockerfile.cc), so spaces, quotes and `;` in it stay
// pip's, and no byte can end the word or the instruction.
const Pattern& pip_requirement() {
  static const std::string name = R"([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)";
  static const std::string ws = R"([ \t]*)";
  static const std::string extras =
      R"(\[)" + ws + "(" + name + "(" + ws + "," + ws + name + ")*)?" + ws + R"(\])";
  static const std::string clause = R"((===|==|!=|~=|>=|<=|>|<))" + ws + R"([A-Za-z0-9.*+!_-]+)";
  static const std::string clauses = clause + "(" + ws + "," + ws + clause + ")*";
  static const std::string versions = "(" + clauses + R"(|\()" + ws + clauses + ws + R"(\))" + ")";
  // A marker starts with a variable, a quoted string or `(`.
  static const std::string marker = R"(;[ \t]*[A-Za-z_"'\(][ -~]*)";
  static const Pattern p =
      Pattern::literal(name + ws + "(" + extras + ")?" + ws + "((" + versions + ")?" + ws + "(" +
                       marker + ")?|@" + ws + R"([!-~]+([ \t]+)" + marker + ")?)");
  return p;
}
// POSIX environment variable names as shells accept them (IEEE Std 1003.1, 8.1).
const Pattern& env_key() {
  static const Pattern p = Pattern::literal(R"([A-Za-z_][A-Za-z0-9_]*)");
  return p;
}

// An image's values are shared by every env that runs it (copy on write): each is checked, and
// reported, once.
void check_image(const Value& image, CheckedValues& checked, Diagnostics& diagnostics) {
  auto first = [&](const Value* value) { return checked.insert(value).second; };
  if (const Value* from = image.get("from"); from && first(from)) {
    std::string path = repository_path(from->text);
    if (!image_reference().matches(from->text)) {
      diagnostics.report(Code::E0312, from->range, "`from` is not one image reference",
                         "letters, digits and `._/:@+-`, no spaces or line breaks");
    } else if (has_upper(path)) {
      diagnostics.report(Code::E0312, from->range,
                         "the repository `" + path + "` in `from` has upper-case letters",
                         "repository paths are lower-case: `" + lower(path) + "`");
    }
  }
  if (const Value* apt = image.get("apt")) {
    for (const ValuePtr& item : apt->items) {
      if (first(item.get()) && !apt_package().matches(item->text)) {
        diagnostics.report(Code::E0313, item->range, "not a Debian package name",
                           "`name`, `name:arch`, `name=version` or `name/release`");
      }
    }
  }
  if (const Value* pip = image.get("pip")) {
    for (const ValuePtr& item : pip->items) {
      if (first(item.get()) && !pip_requirement().matches(item->text)) {
        diagnostics.report(Code::E0314, item->range, "not a pip requirement mlenvc can write",
                           "`name`, `name[extra]`, `name>=1.0,<2`, `name @ URL`, each with an "
                           "optional `; marker`");
      }
    }
  }
  if (const Value* env = image.get("env")) {
    for (const Slot& slot : env->slots) {
      if (!first(slot.value.get())) continue;
      if (!env_key().matches(slot.name)) {
        diagnostics.report(Code::E0315, slot.assigned.valid() ? slot.assigned : env->range,
                           "`" + slot.name.substr(0, 64) + "` is not an environment variable name",
                           "letters, digits and `_`, not starting with a digit");
      }
      if (has_control(slot.value->text, false)) {
        diagnostics.report(Code::E0316, slot.value->range,
                           "an environment value holds a line break or control character",
                           "a Dockerfile ENV value is one line");
      }
    }
  }
  if (const Value* run = image.get("run")) {
    for (const ValuePtr& item : run->items) {
      if (first(item.get()) && has_control(item->text, true)) {
        diagnostics.report(Code::E0316, item->range, "a `run` step holds a control character",
                           "only tabs and line breaks are written into the Dockerfile");
      }
    }
  }
}

// --- Quantities --------------------------------------------------------------------------

void check_resources(const Value& env, Diagnostics& diagnostics) {
  const Value* resources = env.get("resources");
  const Value* shm = child(resources, "shm");
  const Value* memory = child(resources, "memory");
  if (!shm || !memory) return;
  std::optional<long double> shm_bytes = parse_quantity(shm->text);
  std::optional<long double> memory_bytes = parse_quantity(memory->text);
  // A memory of a few bytes is a missing unit, which E0321 reports on its own line.
  if (!shm_bytes || !memory_bytes || *memory_bytes < 0x1p20L || *shm_bytes <= *memory_bytes) {
    return;
  }
  // The caret goes where the user wrote: on `memory` when `shm` is the schema's default.
  const Slot* shm_slot = resources->slot("shm");
  if (shm_slot && !shm_slot->assigned.valid()) {
    Diagnostic& d = diagnostics.report(
        Code::E0317, memory->range,
        "the pod's `memory` (" + memory->text + ") is smaller than its `shm` (" + shm->text + ")",
        "/dev/shm is a memory emptyDir counted against `memory`: raise `memory`, or set a "
        "smaller `shm`");
    d.notes.push_back({"`shm` defaults to " + shm->text, shm->range});
    return;
  }
  Diagnostic& d = diagnostics.report(
      Code::E0317, shm->range,
      "`shm` (" + shm->text + ") is larger than the pod's `memory` (" + memory->text + ")",
      "/dev/shm is a memory emptyDir counted against `memory`");
  d.notes.push_back({"memory set here", memory->range});
}

// --- Networks ----------------------------------------------------------------------------

// Linux interface names hold IFNAMSIZ - 1 = 15 bytes (IFNAMSIZ is 16 in linux/if.h, the NUL
// included); a longer pod interface fails when the CNI plugin renames the device.
constexpr std::size_t kMaxInterfaceName = 15;

void check_interface(const Value* name, Diagnostics& diagnostics) {
  if (name && name->text.size() > kMaxInterfaceName) {
    diagnostics.report(Code::E0420, name->range,
                       "interface name `" + name->text + "` is longer than 15 characters",
                       "Linux limits interface names to IFNAMSIZ - 1 = 15 bytes");
  }
}

/// An IPv4 or IPv6 address as 16 bytes (IPv4 in the first 4) and its family.
struct Address {
  std::array<unsigned char, 16> bytes{};
  bool v6 = false;
};

std::optional<Address> parse_ipv4(std::string_view s) {
  Address a;
  int part = 0;
  std::size_t i = 0;
  for (; part < 4; ++part) {
    if (part > 0) {
      if (i >= s.size() || s[i] != '.') return std::nullopt;
      ++i;
    }
    std::size_t start = i;
    unsigned value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 3)
      value = value * 10 + unsigned(s[i++] - '0');
    // No empty parts, no leading zeros (read as octal by some parsers), at most 255.
    if (i == start || value > 255 || (s[start] == '0' && i - start > 1)) return std::nullopt;
    a.bytes[part] = static_cast<unsigned char>(value);
  }
  if (i != s.size()) return std::nullopt;
  return a;
}

// RFC 4291 §2.2 text forms: eight groups of 1-4 hex digits, one `::` for a run of zero
// groups, optionally ending in a dotted IPv4 address.
std::optional<Address> parse_ipv6(std::string_view s) {
  Address a;
  a.v6 = true;
  std::vector<unsigned> head, tail;
  std::vector<unsigned>* groups = &head;
  bool gap = false;
  std::size_t i = 0;
  if (s.starts_with("::")) {
    gap = true;
    groups = &tail;
    i = 2;
  }
  bool ipv4_tail = false;
  while (i < s.size()) {
    std::size_t start = i;
    unsigned value = 0;
    while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i])) && i - start < 4) {
      char c = s[i++];
      value = value * 16 + unsigned(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (i < s.size() && s[i] == '.') {  // the embedded IPv4 address ends the text
      std::optional<Address> v4 = parse_ipv4(s.substr(start));
      if (!v4) return std::nullopt;
      groups->push_back(unsigned(v4->bytes[0]) << 8 | v4->bytes[1]);
      groups->push_back(unsigned(v4->bytes[2]) << 8 | v4->bytes[3]);
      ipv4_tail = true;
      break;
    }
    if (i == start) return std::nullopt;
    groups->push_back(value);
    if (i == s.size()) break;
    if (s[i] != ':') return std::nullopt;
    ++i;
    if (i < s.size() && s[i] == ':') {
      if (gap) return std::nullopt;
      gap = true;
      groups = &tail;
      ++i;
      if (i == s.size()) break;
    } else if (i == s.size()) {
      return std::nullopt;  // a trailing single `:`
    }
  }
  (void)ipv4_tail;
  std::size_t total = head.size() + tail.size();
  if (gap ? total > 7 : total != 8) return std::nullopt;
  std::vector<unsigned> all = head;
  all.resize(8 - tail.size(), 0);
  all.insert(all.end(), tail.begin(), tail.end());
  for (std::size_t g = 0; g < 8; ++g) {
    a.bytes[2 * g] = static_cast<unsigned char>(all[g] >> 8);
    a.bytes[2 * g + 1] = static_cast<unsigned char>(all[g] & 0xFF);
  }
  return a;
}

std::optional<Address> parse_address(std::string_view s) {
  return s.find(':') == std::string_view::npos ? parse_ipv4(s) : parse_ipv6(s);
}

struct Network {
  Address address;
  unsigned prefix = 0;
};

// `address/prefix`, or a lone address (a full-length prefix) where `allow_bare`.
std::optional<Network> parse_cidr(std::string_view s, bool allow_bare, std::string& why) {
  std::size_t slash = s.find('/');
  if (slash == std::string_view::npos && !allow_bare) {
    why = "a range in CIDR notation (`192.168.5.0/24`)";
    return std::nullopt;
  }
  std::optional<Address> address = parse_address(s.substr(0, slash));
  if (!address) {
    why = "an IPv4 address (`192.168.5.1`) or an IPv6 address (`fd00::1`)";
    return std::nullopt;
  }
  Network n{*address, address->v6 ? 128u : 32u};
  if (slash != std::string_view::npos) {
    std::string_view digits = s.substr(slash + 1);
    unsigned prefix = 0;
    for (char c : digits) prefix = prefix * 10 + unsigned(c - '0');  // 1-3 digits: the schema
    if (digits.empty() || prefix > n.prefix) {
      why = std::string("a prefix length of at most ") + (address->v6 ? "128" : "32");
      return std::nullopt;
    }
    n.prefix = prefix;
  }
  return n;
}

bool contains(const Network& outer, const Network& inner) {
  if (outer.address.v6 != inner.address.v6 || inner.prefix < outer.prefix) return false;
  for (unsigned bit = 0; bit < outer.prefix; ++bit) {
    unsigned byte = bit / 8, mask = 0x80u >> (bit % 8);
    if ((outer.address.bytes[byte] & mask) != (inner.address.bytes[byte] & mask)) return false;
  }
  return true;
}

void check_ipam(const Value* ipam, Diagnostics& diagnostics) {
  const Value* range = child(ipam, "range");
  std::optional<Network> network;
  std::string why;
  if (range) {
    network = parse_cidr(range->text, false, why);
    if (!network) {
      diagnostics.report(Code::E0421, range->range, "`" + range->text + "` is not a valid range",
                         "expected " + why);
    }
  }
  const Value* exclude = child(ipam, "exclude");
  for (const ValuePtr& item : exclude ? exclude->items : ValueList{}) {
    std::optional<Network> excluded = parse_cidr(item->text, true, why);
    if (!excluded) {
      diagnostics.report(Code::E0421, item->range, "`" + item->text + "` is not a valid address",
                         "expected " + why);
    } else if (network && !contains(*network, *excluded)) {
      Diagnostic& d =
          diagnostics.report(Code::E0421, item->range,
                             "`" + item->text + "` lies outside the range `" + range->text + "`",
                             "excluded addresses are within `range`");
      d.notes.push_back({"the range", range->range});
    }
  }
}

// The first or the last address of `network` (its host bits all 0 or all 1), as a network of
// one address.
Network edge(const Network& network, bool last) {
  Network out{network.address, network.address.v6 ? 128u : 32u};
  for (unsigned bit = network.prefix; bit < out.prefix; ++bit) {
    unsigned char mask = static_cast<unsigned char>(0x80u >> (bit % 8));
    auto& byte = out.address.bytes[bit / 8];
    byte = static_cast<unsigned char>(last ? byte | mask : byte & ~mask);
  }
  return out;
}

// 2^(host bits), saturated: past 2^40 addresses no env runs short.
std::uint64_t size_of(const Network& network) {
  unsigned host_bits = (network.address.v6 ? 128u : 32u) - network.prefix;
  return std::uint64_t{1} << std::min(host_bits, 40u);
}

// The excluded networks inside `range`, each once (CIDR ranges nest or are disjoint: one inside
// another adds nothing).
std::vector<Network> outermost_exclusions(const Network& range, const Value* exclude) {
  std::vector<Network> excluded;
  std::string why;
  for (const ValuePtr& item : exclude ? exclude->items : ValueList{}) {
    std::optional<Network> n = parse_cidr(item->text, true, why);
    if (n && contains(range, *n)) excluded.push_back(*n);
  }
  std::vector<Network> outermost;
  for (std::size_t i = 0; i < excluded.size(); ++i) {
    bool inner = false;
    for (std::size_t j = 0; j < excluded.size() && !inner; ++j) {
      bool same = contains(excluded[j], excluded[i]) && contains(excluded[i], excluded[j]);
      inner = j != i && contains(excluded[j], excluded[i]) && (!same || j < i);
    }
    if (!inner) outermost.push_back(excluded[i]);
  }
  return outermost;
}

bool overlap(const Network& a, const Network& b) {
  return contains(a, b) || contains(b, a);
}

// Each rail is a subnet of its own: whereabouts hands out each rail's range independently, so
// overlapping ranges put two rails of a pod in one subnet (or one address on two pods).
void check_rail_ranges(const ValueList& rails, Diagnostics& diagnostics) {
  std::vector<std::pair<Network, const Value*>> ranges;
  for (const ValuePtr& rail : rails) {
    const Value* range = child(child(rail.get(), "ipam"), "range");
    std::string why;
    std::optional<Network> network = range ? parse_cidr(range->text, false, why) : std::nullopt;
    if (!network) continue;
    for (const auto& [earlier, earlier_range] : ranges) {
      if (!overlap(earlier, *network)) continue;
      Diagnostic& d = diagnostics.report(
          Code::E0429, range->range,
          "`" + range->text + "` overlaps `" + earlier_range->text + "` of another rail",
          "give each rail a subnet of its own");
      d.notes.push_back({"the other rail's range", earlier_range->range});
      break;
    }
    ranges.push_back({*network, range});
  }
}

void check_networks(const Value* cluster, Diagnostics& diagnostics) {
  const Value* network = child(cluster, "network");
  const Value* rails = child(child(network, "rdma"), "rails");
  for (const ValuePtr& rail : rails ? rails->items : ValueList{}) {
    check_interface(rail->get("interface"), diagnostics);
    check_ipam(rail->get("ipam"), diagnostics);
  }
  if (rails) check_rail_ranges(rails->items, diagnostics);
  const Value* tcp = child(child(network, "tcp"), "interfaces");
  for (const ValuePtr& name : tcp ? tcp->items : ValueList{}) {
    check_interface(name.get(), diagnostics);
  }
}

// A node name is a DNS subdomain on Kubernetes (a `kubernetes.io/hostname` value in the pods'
// node affinity) and a host name in Slurm's `--nodelist`: a newline, quote or space in it ends
// the value where the cluster reads it.
const Pattern& host_name() {
  static const Pattern p = Pattern::literal(R"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)");
  return p;
}

std::string excerpt(const std::string& text);

void check_nodes(const Value* cluster, Diagnostics& diagnostics) {
  const Value* nodes = child(cluster, "nodes");
  std::map<std::string, SourceRange> seen;
  for (const ValuePtr& node : nodes ? nodes->items : ValueList{}) {
    if (node->text.size() > 253 || !host_name().matches(node->text)) {
      diagnostics.report(Code::E0431, node->range,
                         "node `" + excerpt(node->text) + "` is not a host name",
                         "letters, digits and `-_.`, alphanumeric at both ends, at most 253");
      continue;
    }
    auto [it, fresh] = seen.emplace(node->text, node->range);
    if (!fresh) {
      Diagnostic& d =
          diagnostics.report(Code::E0422, node->range, "node `" + node->text + "` is pinned twice",
                             "two pods would want the same node");
      d.notes.push_back({"first pinned here", it->second});
    }
  }
}

// --- Labels ------------------------------------------------------------------------------

// k8s.io/apimachinery/pkg/util/validation: IsQualifiedName (an optional DNS-1123 subdomain
// prefix of at most 253 characters and `/`, then a name of at most 63 characters matching
// qualifiedNameFmt) and IsValidLabelValue (empty, or at most 63 characters of that form).
const Pattern& label_name() {
  static const Pattern p = Pattern::literal(R"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])");
  return p;
}
const Pattern& dns_subdomain() {
  static const Pattern p =
      Pattern::literal(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)");
  return p;
}

bool is_qualified_name(std::string_view key) {
  std::size_t slash = key.find('/');
  std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    if (prefix.empty() || prefix.size() > 253 || !dns_subdomain().matches(prefix)) return false;
  }
  return !name.empty() && name.size() <= 63 && label_name().matches(name);
}

bool is_label_value(std::string_view value) {
  return value.empty() || (value.size() <= 63 && label_name().matches(value));
}

std::string excerpt(const std::string& text) {
  return text.size() <= 64 ? text : text.substr(0, 61) + "...";
}

// A label key whose prefix Kubernetes reserves for its components (`kubernetes.io/`, `k8s.io/`
// and their subdomains, the SIGs' controllers' `*.x-k8s.io` (a queue name, a workload's
// name) and kubectl's `applyset.kubernetes.io/*`), OpenShift's `openshift.io`, or
// one of the three `app.kubernetes.io/` labels mlenvc sets on every object (env_layout.cc).
// Set by the user, it would override what mlenvc or a controller sets, or be overridden.
bool is_reserved_label(std::string_view key) {
  for (std::string_view own :
       {"app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/part-of"})
    if (key == own) return true;
  std::size_t slash = key.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view prefix = key.substr(0, slash);
  if (prefix == "app.kubernetes.io") return false;  // the recommended labels are the user's
  for (std::string_view domain : {"kubernetes.io", "k8s.io", "openshift.io"}) {
    if (prefix == domain) return true;
    if (prefix.size() > domain.size() && prefix.ends_with(domain)) {
      char before = prefix[prefix.size() - domain.size() - 1];
      if (before == '.' || (before == '-' && domain == "k8s.io")) return true;  // x-k8s.io
    }
  }
  return false;
}

void check_labels(const Value& env, Diagnostics& diagnostics) {
  const Value* labels = env.get("labels");
  for (const Slot& slot : labels ? labels->slots : std::vector<Slot>{}) {
    SourceRange at = slot.assigned.valid() ? slot.assigned : labels->range;
    if (is_reserved_label(slot.name)) {
      diagnostics.report(Code::E0432, at, "label key `" + excerpt(slot.name) + "` is reserved",
                         "mlenvc, Kubernetes or a controller sets it; use a prefix of your own");
    }
    if (!is_qualified_name(slot.name)) {
      diagnostics.report(
          Code::E0318, at,
          "label key `" + excerpt(slot.name) + "` is not a Kubernetes qualified name",
          "`[prefix/]name`: a name of at most 63 characters, alphanumeric at both "
          "ends, with `-_.` inside");
    }
    if (!is_label_value(slot.value->text)) {
      diagnostics.report(
          Code::E0318, slot.value->range,
          "label value `" + excerpt(slot.value->text) + "` is not a Kubernetes label value",
          "at most 63 characters, alphanumeric at both ends, with `-_.` inside");
    }
  }
}

// --- final -------------------------------------------------------------------------------

// Two storage values say the same: quantities by their value (`100Gi` is `102400Mi`), the rest
// as written.
bool same_storage_value(const Value& a, const Value& b) {
  if (a.kind == Value::Kind::Quantity && b.kind == Value::Kind::Quantity) {
    return parse_quantity(a.text) == parse_quantity(b.text);
  }
  return a.text == b.text;
}

// `final` in a cluster profile locks a storage field for every declaration that extends it;
// an env's `storage` override reaches the same field from the side and must respect it too.
// `final storage { ... }` (or `final storage = profile`) locks every field of the block.
void check_final_storage(const Value& env, const Value* cluster, Diagnostics& diagnostics) {
  const Value* override_block = env.get("storage");
  const Slot* storage = cluster ? cluster->slot("storage") : nullptr;
  if (!override_block || !storage) return;
  for (const Slot& slot : override_block->slots) {
    const Slot* field = storage->value->slot(slot.name);
    SourceRange locked = storage->final_at.valid() ? storage->final_at
                         : field                   ? field->final_at
                                                   : SourceRange{};
    if (!locked.valid() || (field && same_storage_value(*field->value, *slot.value))) continue;
    Diagnostic& d = diagnostics.report(
        Code::E0319, slot.assigned.valid() ? slot.assigned : slot.value->range,
        "env overrides `storage." + slot.name + "`, which the cluster made final");
    d.notes.push_back({"made final here", locked});
  }
}

// A cluster that makes its RDMA network final (`final network { ... }` or
// `network { final rdma { ... } }`) promises every env the fabric; `network = tcp` on an env
// would route its traffic around it from the side, as a storage override would.
void check_final_network(const Value& env, const Value* cluster, Diagnostics& diagnostics) {
  const Value* transport = env.get("network");
  const Slot* network = cluster ? cluster->slot("network") : nullptr;
  if (!transport || transport->text != "tcp" || !network) return;
  const Slot* rdma = network->value->slot("rdma");
  if (!rdma) return;
  SourceRange locked = network->final_at.valid() ? network->final_at : rdma->final_at;
  if (!locked.valid()) return;
  const Slot* assigned = env.slot("network");
  Diagnostic& d = diagnostics.report(
      Code::E0319, assigned && assigned->assigned.valid() ? assigned->assigned : transport->range,
      "env sets `network = tcp`, but the cluster made its RDMA network final",
      "use `network = rdma` (or `auto`), or a cluster whose RDMA network is not final");
  d.notes.push_back({"made final here", locked});
}

// A product no known GPU has is most often a near miss of one (`NVIDIA-H100-80GB` for
// `NVIDIA-H100-80GB-HBM3`): the node selector matches no node, and the pods stay Pending. A
// warning, since a GPU newer than mlenvc's table is labelled correctly.
void check_known_gpu(const Value& product, Diagnostics& diagnostics) {
  if (find_gpu_product(product.text)) return;
  std::vector<std::string> near = near_gpu_products(product.text);
  std::string hint = near.empty() ? "the node label's exact value (`kubectl get nodes "
                                    "-L nvidia.com/gpu.product`)"
                                  : "did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i) {
    hint += (i == 0 ? "`" : i + 1 == near.size() ? "` or `" : "`, `") + near[i];
  }
  if (!near.empty()) hint += "`?";
  Diagnostic& d = diagnostics.report(
      Code::W0407, product.range, "no GPU mlenvc knows is labelled `" + excerpt(product.text) + "`",
      std::move(hint));
  d.notes.push_back(
      {"pods select nodes by this label: where no node has it, they stay Pending", {}});
}

// `gpus.product` is the value of the `nvidia.com/gpu.product` node label the pods select.
void check_gpu_product(const Value* cluster, Diagnostics& diagnostics) {
  const Value* product = child(child(cluster, "gpus"), "product");
  if (!product) return;
  if (is_label_value(product->text)) {
    const Value* resource = child(child(cluster, "gpus"), "resource");
    if (!resource || resource->text.starts_with("nvidia.com/")) {
      check_known_gpu(*product, diagnostics);
    }
    return;
  }
  diagnostics.report(
      Code::E0318, product->range,
      "`gpus.product` `" + excerpt(product->text) + "` is not a Kubernetes label value",
      "the node label's value: at most 63 characters, alphanumeric at both ends, "
      "with `-_.` inside");
}

// A Slurm folder is a line of the batch script and a `--container-mounts` item: a control byte
// (a carriage return, an escape) would end or hide the line where Slurm and people read it.
void check_slurm_folders(const Value* cluster, Diagnostics& diagnostics) {
  for (const char* field : {"workspace_dir", "datasets_dir"}) {
    const Value* folder = child(cluster, field);
    if (!folder || !has_control(folder->text, false)) continue;
    diagnostics.report(Code::E0431, folder->range,
                       "`" + std::string(field) + "` holds a control character",
                       "a folder of the nodes: printable characters only");
  }
}

}  // namespace

std::optional<std::uint64_t> whereabouts_addresses(const Value* ipam) {
  const Value* range = child(ipam, "range");
  std::string why;
  std::optional<Network> network = range ? parse_cidr(range->text, false, why) : std::nullopt;
  if (!network) return std::nullopt;
  // whereabouts' iphelpers.GetIPRange: the first and last usable addresses exclude the network
  // and broadcast ones, and a range of fewer than two host bits has none.
  unsigned host_bits = (network->address.v6 ? 128u : 32u) - network->prefix;
  if (host_bits <= 1) return 0;
  const Network first = edge(*network, false), last = edge(*network, true);
  std::uint64_t usable = size_of(*network) - 2;
  for (const Network& excluded : outermost_exclusions(*network, child(ipam, "exclude"))) {
    std::uint64_t taken = size_of(excluded);
    if (contains(excluded, first)) --taken;
    if (contains(excluded, last)) --taken;
    usable -= std::min(usable, taken);
  }
  return usable;
}

bool is_extended_resource_name(std::string_view name) {
  // k8s.io/kubernetes pkg/apis/core/helper/helpers.go, IsExtendedResourceName: not native
  // (has a `/`, is not in `kubernetes.io/`), not `requests.`-prefixed, and `requests.` + name
  // is a qualified name (so the domain is at most 244 characters and the name at most 63).
  if (name.find('/') == std::string_view::npos ||
      name.find("kubernetes.io/") != std::string_view::npos || name.starts_with("requests."))
    return false;
  return is_qualified_name("requests." + std::string(name));
}

void check_hygiene(const Value& env, CheckedValues& checked, Diagnostics& diagnostics) {
  const Value* cluster = env.get("cluster");
  if (const Value* image = env.get("image"); image && image->kind == Value::Kind::Block) {
    check_image(*image, checked, diagnostics);
  }
  check_resources(env, diagnostics);
  // So are a cluster's: each env's cluster is a copy sharing the cluster's values, which are
  // checked and reported once.
  auto first = [&](const Value* value) { return value && checked.insert(value).second; };
  if (first(child(cluster, "network"))) check_networks(cluster, diagnostics);
  if (first(child(cluster, "nodes"))) check_nodes(cluster, diagnostics);
  if (first(child(child(cluster, "gpus"), "product"))) check_gpu_product(cluster, diagnostics);
  check_slurm_folders(cluster, diagnostics);
  check_labels(env, diagnostics);
  check_final_storage(env, cluster, diagnostics);
  check_final_network(env, cluster, diagnostics);
}

}  // namespace mlenv::check
