#include "compiler/lsp/protocol.h"

#include <algorithm>
#include <cctype>

namespace mlenv::lsp {
namespace {

// UTF-16 code units of the UTF-8 character starting with byte `lead`: 2 for the 4-byte
// characters (outside the Basic Multilingual Plane, a surrogate pair), else 1.
int utf16_units(unsigned char lead) {
  return lead >= 0xF0 ? 2 : 1;
}

// Bytes of the UTF-8 character starting with `lead` (1 for a stray continuation byte).
std::size_t utf8_length(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// One header line, without its newline, into `line`; false at the end of the input or past
// kMaxHeaderLineBytes (std::getline buffered a line without a newline whole: 256 MiB in, 519
// MiB resident, issue 32).
bool read_header_line(std::istream& in, std::string& line) {
  line.clear();
  std::istream::int_type c;
  while ((c = in.get()) != std::istream::traits_type::eof()) {
    if (c == '\n') return true;
    if (line.size() == kMaxHeaderLineBytes) return false;
    line.push_back(static_cast<char>(c));
  }
  return false;
}

}  // namespace

std::optional<std::string> read_message(std::istream& in) {
  std::optional<std::size_t> length;
  std::string line;
  while (true) {
    if (!read_header_line(in, line)) return std::nullopt;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // the blank line that ends the header
    std::string name = line.substr(0, line.find(':'));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == "content-length" && line.size() > name.size()) {
      std::string digits = line.substr(name.size() + 1);
      digits.erase(0, digits.find_first_not_of(' '));
      if (digits.empty() || digits.size() > 9 ||
          !std::all_of(digits.begin(), digits.end(), ::isdigit))
        return std::nullopt;
      length = std::stoul(digits);
    }
  }
  if (!in || !length || *length > kMaxMessageBytes) return std::nullopt;
  std::string body(*length, '\0');
  if (!in.read(body.data(), static_cast<std::streamsize>(body.size()))) return std::nullopt;
  return body;
}

void write_message(std::ostream& out, std::string_view body) {
  out << "Content-Length: " << body.size() << "\r\n\r\n" << body;
  out.flush();
}

Position position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  Position position;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++position.line;
      line_start = i + 1;
    }
  }
  for (std::size_t i = line_start; i < offset;) {
    auto lead = static_cast<unsigned char>(text[i]);
    position.character += utf16_units(lead);
    i += utf8_length(lead);
  }
  return position;
}

std::size_t offset_of(std::string_view text, Position position) {
  std::size_t i = 0;
  for (int line = 0; line < position.line; ++line) {
    std::size_t end = text.find('\n', i);
    if (end == std::string_view::npos) return text.size();
    i = end + 1;
  }
  for (int units = 0; i < text.size() && text[i] != '\n';) {
    auto lead = static_cast<unsigned char>(text[i]);
    units += utf16_units(lead);
    if (units > position.character) break;
    i = std::min(text.size(), i + utf8_length(lead));
  }
  return i;
}

std::string path_of_uri(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.substr(0, kScheme.size()) != kScheme) return "";
  uri.remove_prefix(kScheme.size());
  uri = uri.substr(0, uri.find_first_of("?#"));
  std::string path;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size() && hex_value(uri[i + 1]) >= 0 &&
        hex_value(uri[i + 2]) >= 0) {
      path += static_cast<char>(hex_value(uri[i + 1]) * 16 + hex_value(uri[i + 2]));
      i += 2;
    } else {
      path += uri[i];
    }
  }
  // `file://host/path`: only the local host's files are readable.
  if (!path.empty() && path[0] != '/') {
    std::size_t slash = path.find('/');
    path = slash == std::string::npos ? "" : path.substr(slash);
  }
  return path;
}

std::string uri_of_path(std::string_view path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string uri = "file://";
  for (char c : path) {
    auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += c;
    } else {
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 15];
    }
  }
  return uri;
}

}  // namespace mlenv::lsp
