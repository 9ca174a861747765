// libFuzzer target over what mlenv-boot reads from the network and from boot.json: the JSON
// reader, the line framing of the rendezvous protocol, rank 0's check of a join, a node's reading
// of the plan, and rank 0's control hub. Any bytes must end in a value or a refusal: never a
// crash, a sanitizer report, a hang, unbounded memory or an exception other than BootError.

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config.h"
#include "control.h"
#include "exit_code.h"
#include "json.h"
#include "net.h"
#include "plan.h"
#include "rendezvous.h"

namespace {

// Small, so that inputs of a few hundred bytes reach the oversized-line path.
constexpr size_t kLineLimit = 256;

// A property the code must keep; a violation is reported as a crash, with the input saved.
void require(bool holds) {
  if (!holds) __builtin_trap();
}

// The reader and the writer agree: a document that parses writes to text that reads back to the
// same value, compact and indented alike.
void check_json(std::string_view text) {
  boot::JsonParseResult parsed = boot::parse_json(text);
  if (!parsed.value) return;
  for (const std::string& written : {parsed.value->dump(), parsed.value->pretty()}) {
    boot::JsonParseResult again = boot::parse_json(written);
    require(again.value && *again.value == *parsed.value);
  }
}

void check_config(std::string_view text) {
  try {
    boot::parse_config(text);
  } catch (const boot::BootError&) {
  }
}

// What the framing must deliver for `text`: each complete line parsed, up to the first line that
// is too long or not a JSON object; `ok` false when the stream must end in a refusal.
std::vector<boot::Json> expected_messages(std::string_view text, bool& ok) {
  std::vector<boot::Json> messages;
  ok = true;
  for (;;) {
    size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      ok = text.size() <= kLineLimit;
      return messages;
    }
    std::string_view line = text.substr(0, newline);
    boot::JsonParseResult parsed = boot::parse_json(line);
    if (line.size() > kLineLimit || !parsed.value || !parsed.value->is_object()) {
      ok = false;
      return messages;
    }
    messages.push_back(std::move(*parsed.value));
    text.remove_prefix(newline + 1);
  }
}

// What rank 0 and a node make of one message: never more than a refusal.
void check_message(const boot::Json& message) {
  boot::JoinRequest self;
  self.job = "fuzz/env";
  self.token = "token";
  self.nnodes = 4;
  self.nproc_per_node = 2;
  boot::NodeReport report;
  if (!boot::refuse_join(self, message, report)) {
    require(report.rank >= 1 && report.rank < self.nnodes);
  }
  if (const boot::Json* plan = message.find("plan")) {
    try {
      boot::JobPlan decoded = boot::plan_from_json(*plan);
      require(static_cast<int>(decoded.hosts.size()) == decoded.nnodes);
      // A node's check of a plan against its own boot.json: an answer, never a crash.
      boot::BootConfig config;
      config.job = decoded.run_id;
      config.transport = "auto";
      (void)boot::plan_mismatch(config, decoded.nnodes, decoded);
    } catch (const boot::BootError&) {
    }
  }
}

// The bytes as a peer's stream, written in pieces of a size the input picks, each followed by a
// read, so lines are split across reads at every place.
void check_framing(std::string_view text) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return;
  boot::Fd writer(fds[0]);
  boot::LineConnection reader(boot::Fd(fds[1]), kLineLimit);
  size_t piece = text.empty() ? 1 : 1 + static_cast<unsigned char>(text[0]) % 97;
  std::vector<boot::Json> received;
  size_t written = 0;
  bool open = true;
  while (open) {
    if (written < text.size()) {
      ssize_t n =
          ::write(writer.get(), text.data() + written, std::min(piece, text.size() - written));
      if (n > 0) written += static_cast<size_t>(n);
    } else if (writer.valid()) {
      writer = boot::Fd();  // EOF after the last byte
    }
    open = reader.receive(received);
    require(reader.buffered() <= kLineLimit);
  }
  bool ok = false;
  std::vector<boot::Json> expected = expected_messages(text, ok);
  require(received == expected);
  require(reader.failure().empty() == ok);
  for (const boot::Json& message : received) check_message(message);
}

// The same stream as a member's control messages to rank 0's hub: heartbeats, failures, done.
void check_control(std::string_view text) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return;
  boot::Fd writer(fds[0]);
  std::vector<std::unique_ptr<boot::LineConnection>> members(2);
  members[1] = std::make_unique<boot::LineConnection>(boot::Fd(fds[1]), kLineLimit);
  std::unique_ptr<boot::ControlLink> hub = boot::make_coordinator_link(std::move(members), 60);
  hub->report_done();
  size_t written = 0;
  // Bounded: every round writes, reads or ends; the hub reports at most one event.
  for (int round = 0; round < 100000; ++round) {
    if (written < text.size()) {
      ssize_t n = ::write(writer.get(), text.data() + written, text.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
    } else if (writer.valid()) {
      writer = boot::Fd();
    }
    boot::ControlEvent event = hub->service();
    if (event.kind != boot::ControlEvent::kNone) return;
  }
  require(false);  // the stream ended long ago; the hub must have seen the close
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_json(text);
  check_config(text);
  check_framing(text);
  check_control(text);
  return 0;
}
