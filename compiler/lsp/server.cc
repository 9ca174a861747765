#include "compiler/lsp/server.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "compiler/base/atomic_file.h"
#include "compiler/base/embedded.h"
#include "compiler/base/version.h"
#include "compiler/lsp/completion.h"
#include "compiler/lsp/navigation.h"
#include "compiler/lsp/protocol.h"
#include "compiler/parse/parser.h"
#include "compiler/syntax/format.h"

namespace mlenv::lsp {
namespace {

using boot::Json;

// JSON-RPC error codes.
constexpr int kParseError = -32700, kInvalidRequest = -32600, kMethodNotFound = -32601;

// SymbolKind of each declaration kind: clusters hold the rest, images are built, envs run.
int symbol_kind(const std::string& kind) {
  if (kind == "cluster") return 3;   // Namespace
  if (kind == "image") return 5;     // Class
  if (kind == "env") return 19;      // Object
  if (kind == "storage") return 23;  // Struct
  return 11;                         // Interface (network)
}

const Json* member(const Json& object, std::string_view key) {
  return object.is_object() ? object.find(key) : nullptr;
}

std::string string_member(const Json& object, std::string_view key) {
  const Json* value = member(object, key);
  return value && value->is_string() ? value->as_string() : "";
}

Json position_json(Position p) {
  return Json::object().set("line", p.line).set("character", p.character);
}

Json range_json(std::string_view text, std::size_t begin, std::size_t end) {
  return Json::object()
      .set("start", position_json(position_of(text, begin)))
      .set("end", position_json(position_of(text, end)));
}

// The position of byte `offset` of a loaded file: its line from the file's line table, the
// column counted over that line only (a 1,000-env program has 2,000 symbols).
Position position_in(const SourceFile& file, std::uint32_t offset) {
  LineColumn at = file.position(offset);
  std::string_view line = file.line(at.line);
  std::string_view prefix = line.substr(0, std::min<std::size_t>(at.column - 1, line.size()));
  return {static_cast<int>(at.line) - 1, position_of(prefix, prefix.size()).character};
}

Json range_json(const SourceFile& file, std::uint32_t begin, std::uint32_t end) {
  return Json::object()
      .set("start", position_json(position_in(file, begin)))
      .set("end", position_json(position_in(file, end)));
}

Position position_param(const Json& params) {
  const Json* p = member(params, "position");
  Position position;
  if (p && member(*p, "line") && member(*p, "line")->is_number())
    position.line = static_cast<int>(member(*p, "line")->as_int());
  if (p && member(*p, "character") && member(*p, "character")->is_number())
    position.character = static_cast<int>(member(*p, "character")->as_int());
  return position;
}

// Whether `path` is among the files reached from `from` through imports.
bool reaches(const check::ProgramIndex& index, const std::string& from, const std::string& path,
             std::set<std::string>& seen) {
  if (from == path) return true;
  if (!seen.insert(from).second) return false;
  for (const check::LoadedFile& file : index.files) {
    if (file.path != from) continue;
    for (const auto& [qualifier, imported] : file.imports) {
      if (reaches(index, imported, path, seen)) return true;
    }
  }
  return false;
}

// The root's import through which the check reached the file at `path`; nullptr if none.
const ast::Import* import_toward(const check::ProgramIndex& index, const std::string& path) {
  if (index.files.empty() || !index.files.front().tree) return nullptr;
  const check::LoadedFile& root = index.files.front();
  for (const ast::Item& item : root.tree->items) {
    const auto* import = boost::get<ast::Import>(&item);
    if (!import) continue;
    auto it = root.imports.find(qualifier_of(*import));
    std::set<std::string> seen;
    if (it != root.imports.end() && reaches(index, it->second, path, seen)) return import;
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> OverlayFileSystem::read(const std::string& path,
                                                   std::string& error) const {
  if (auto it = open_.find(path); it != open_.end()) return it->second;
  return disk_.read(path, error);
}

std::optional<std::string> OverlayFileSystem::read_inside(const std::string& path,
                                                          const std::vector<std::string>& folders,
                                                          std::string& error) const {
  if (auto it = open_.find(path); it != open_.end()) return it->second;
  return disk_.read_inside(path, folders, error);
}

// A folder only this user can use, made fresh: `mlenvc lsp` with no HOME wrote to the shared
// `/tmp/.cache`, where another user's link got a 0600 file overwritten and made world-readable
// (issue 32). mkdtemp makes it 0700 and fails rather than reuse a path that exists.
std::string private_folder() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/mlenvc-lsp-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

std::string default_stdlib_cache() {
  // The XDG Base Directory specification: XDG_CACHE_HOME, else ~/.cache; XDG_RUNTIME_DIR is
  // the user's own (0700) folder for files of this session.
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home == '/') {
    base = std::string(home) + "/.cache";
  } else if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime == '/') {
    base = runtime;
  } else {
    return private_folder() + "/" + kCompilerVersion;
  }
  return base + "/mlenvc/" + kCompilerVersion;
}

Server::Server(std::string stdlib_cache, std::ostream& out)
    : out_(out), stdlib_cache_(std::move(stdlib_cache)) {
  Diagnostics diagnostics;
  types_ = check::load_types(type_sources_, diagnostics);
}

int Server::run(std::istream& in) {
  while (!exited_) {
    std::optional<std::string> body = read_message(in);
    if (!body) return 1;
    receive(*body);
  }
  return shutdown_ ? 0 : 1;
}

void Server::receive(std::string_view body) {
  boot::JsonParseResult parsed = boot::parse_json(body);
  if (parsed.value && parsed.value->is_object()) return handle(*parsed.value);
  send(Json::object()
           .set("jsonrpc", "2.0")
           .set("id", nullptr)
           .set("error",
                Json::object()
                    .set("code", parsed.value ? kInvalidRequest : kParseError)
                    .set("message", parsed.value ? "not a JSON-RPC message" : parsed.error)));
}

void Server::send(const Json& message) {
  write_message(out_, message.dump());
}

void Server::handle(const Json& message) {
  std::string method = string_member(message, "method");
  const Json* params = member(message, "params");
  Json none = Json::object();
  const Json* id = member(message, "id");
  if (!id) return notification(method, params ? *params : none);
  bool found = true;
  Json result = request(method, params ? *params : none, found);
  Json reply = Json::object().set("jsonrpc", "2.0").set("id", *id);
  if (found) {
    reply.set("result", result);
  } else {
    reply.set("error", Json::object()
                           .set("code", kMethodNotFound)
                           .set("message", "mlenvc lsp does not serve `" + method + "`"));
  }
  send(reply);
}

Json Server::request(const std::string& method, const Json& params, bool& found) {
  if (method == "initialize") {
    Json sync = Json::object()
                    .set("openClose", true)
                    .set("change", 1)  // the whole text on every change
                    .set("save", Json::object().set("includeText", false));
    Json triggers = Json::array();
    for (const char* c : {".", "=", "\"", "/"}) triggers.push(c);
    Json capabilities =
        Json::object()
            .set("textDocumentSync", sync)
            .set("hoverProvider", true)
            .set("definitionProvider", true)
            .set("completionProvider", Json::object().set("triggerCharacters", triggers))
            .set("documentFormattingProvider", true)
            .set("documentSymbolProvider", true);
    return Json::object()
        .set("capabilities", capabilities)
        .set("serverInfo", Json::object().set("name", "mlenvc").set("version", kCompilerVersion));
  }
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }
  if (method == "textDocument/hover") return hover(params);
  if (method == "textDocument/definition") return definition(params);
  if (method == "textDocument/completion") return completion(params);
  if (method == "textDocument/formatting") return formatting(params);
  if (method == "textDocument/documentSymbol") return symbols(params);
  found = false;
  return nullptr;
}

void Server::notification(const std::string& method, const Json& params) {
  if (method == "exit") {
    exited_ = true;
    return;
  }
  const Json* text_document = member(params, "textDocument");
  std::string uri = text_document ? string_member(*text_document, "uri") : "";
  std::string path = path_of_uri(uri);
  if (method == "textDocument/didOpen" && !path.empty()) {
    Document& document = documents_[path];
    document.uri = uri;
    document.path = path;
    document.text = string_member(*text_document, "text");
    files_.open(path, document.text);
    check(document);
    check_importers(path);
  } else if (method == "textDocument/didChange" && documents_.count(path)) {
    const Json* changes = member(params, "contentChanges");
    if (!changes || !changes->is_array() || changes->as_array().empty()) return;
    Document& document = documents_[path];
    document.text = string_member(changes->as_array().back(), "text");
    files_.open(path, document.text);
    check(document);
    check_importers(path);
  } else if (method == "textDocument/didClose" && documents_.count(path)) {
    files_.close(path);
    Json empty = Json::object().set("uri", documents_[path].uri).set("diagnostics", Json::array());
    documents_.erase(path);
    send(Json::object()
             .set("jsonrpc", "2.0")
             .set("method", "textDocument/publishDiagnostics")
             .set("params", empty));
    check_importers(path);
  } else if (method == "textDocument/didSave" || method == "workspace/didChangeWatchedFiles") {
    // A file on disk changed (or was deleted): every open program may read it.
    for (auto& [open_path, document] : documents_) check(document);
  }
}

void Server::check(Document& document) {
  std::vector<std::string> notes;
  // The previous check is freed once the diagnostics are out: the editor waits for them.
  std::unique_ptr<driver::Compilation> previous = std::move(document.compilation);
  document.compilation = driver::check_file(document.path, files_, notes, true);
  publish(document);
}

void Server::check_importers(const std::string& path) {
  for (auto& [open_path, document] : documents_) {
    if (open_path == path || !document.compilation) continue;
    std::set<std::string> seen;
    const check::ProgramIndex& index = document.compilation->index;
    if (!index.files.empty() && reaches(index, index.files.front().path, path, seen))
      check(document);
  }
}

void Server::publish(const Document& document) {
  Json list = Json::array();
  for (const Diagnostic& d : document.compilation->diagnostics.all())
    list.push(diagnostic(document, d));
  send(Json::object()
           .set("jsonrpc", "2.0")
           .set("method", "textDocument/publishDiagnostics")
           .set("params", Json::object().set("uri", document.uri).set("diagnostics", list)));
}

Json Server::diagnostic(const Document& document, const Diagnostic& d) {
  static const int kSeverity[] = {1, 2, 3};  // Error, Warning, Information
  const SourceManager& sources = document.compilation->sources;
  std::string message = d.message + (d.label.empty() ? "" : "\n" + d.label);
  Json out = Json::object()
                 .set("severity", kSeverity[static_cast<int>(d.severity)])
                 .set("code", std::string(code_info(d.code).id))
                 .set("source", "mlenvc");
  Json related = Json::array();
  auto relate = [&](const SourceRange& range, const std::string& text) {
    const SourceFile& file = sources.file(range.file);
    related.push(Json::object()
                     .set("location", Json::object()
                                          .set("uri", uri_of_path(disk_path(file.path())))
                                          .set("range", range_json(file, range.begin, range.end)))
                     .set("message", text));
  };
  if (d.range.valid() && sources.file(d.range.file).path() == document.path) {
    out.set("range", range_json(sources.file(d.range.file), d.range.begin, d.range.end));
  } else {
    // A place in another file: shown at the import that leads there, pointing at it.
    std::size_t begin = 0, end = 0;
    if (d.range.valid()) {
      const SourceFile& file = sources.file(d.range.file);
      LineColumn at = file.position(d.range.begin);
      message = "in " + file.path() + ":" + std::to_string(at.line) + ":" +
                std::to_string(at.column) + ": " + message;
      relate(d.range, d.message);
      if (const ast::Import* import = import_toward(document.compilation->index, file.path())) {
        begin = import->begin;
        end = import->end;
      }
    }
    out.set("range", range_json(document.text, begin, end));
  }
  for (const DiagnosticNote& note : d.notes) {
    if (note.range.valid()) relate(note.range, note.message);
  }
  out.set("message", message);
  if (!related.as_array().empty()) out.set("relatedInformation", related);
  return out;
}

Document* Server::document(const Json& params) {
  const Json* text_document = member(params, "textDocument");
  if (!text_document) return nullptr;
  auto it = documents_.find(path_of_uri(string_member(*text_document, "uri")));
  return it == documents_.end() || !it->second.compilation ? nullptr : &it->second;
}

std::string Server::disk_path(const std::string& path) {
  if (path.rfind("std/", 0) != 0) return path;
  if (!stdlib_written_) {
    // Written once per version, read-only: an editor shows the stdlib, nobody edits the copy.
    for (std::size_t i = 0; i < kStdlibFiles_count; ++i) {
      std::filesystem::path file = stdlib_cache_ + "/" + std::string(kStdlibFiles[i].path);
      std::error_code error;
      std::filesystem::create_directories(file.parent_path(), error);
      std::string error_text;
      struct stat st {};
      auto existing = DiskFileSystem().read(file.string(), error_text);
      if (existing && *existing == kStdlibFiles[i].bytes && ::lstat(file.c_str(), &st) == 0 &&
          S_ISREG(st.st_mode))
        continue;
      // A new file renamed over the path: a link planted there is replaced, never written
      // through (the stdlib once overwrote and chmod'ed another user's file).
      write_file_atomic(file.string(), kStdlibFiles[i].bytes, 0444, error_text);
    }
    stdlib_written_ = true;
  }
  return stdlib_cache_ + "/" + path;
}

Json Server::location(const Document& document, const std::string& path, std::uint32_t begin,
                      std::uint32_t end) {
  ProgramView view(document.compilation->index, document.compilation->sources, *types_);
  const check::LoadedFile* file = view.file(path);
  Json range = file ? range_json(document.compilation->sources.file(file->file), begin, end)
                    : range_json(std::string_view(), 0, 0);
  return Json::object()
      .set("uri", path == document.path ? document.uri : uri_of_path(disk_path(path)))
      .set("range", range);
}

Json Server::hover(const Json& params) {
  Document* doc = document(params);
  if (!doc) return nullptr;
  ProgramView view(doc->compilation->index, doc->compilation->sources, *types_);
  std::string text = view.hover(
      doc->path, static_cast<std::uint32_t>(offset_of(doc->text, position_param(params))));
  if (text.empty()) return nullptr;
  return Json::object().set("contents", Json::object().set("kind", "markdown").set("value", text));
}

Json Server::definition(const Json& params) {
  Document* doc = document(params);
  if (!doc) return nullptr;
  ProgramView view(doc->compilation->index, doc->compilation->sources, *types_);
  auto target = view.definition(
      doc->path, static_cast<std::uint32_t>(offset_of(doc->text, position_param(params))));
  if (!target) return nullptr;
  return location(*doc, target->path, target->begin, target->end);
}

Json Server::completion(const Json& params) {
  Document* doc = document(params);
  if (!doc) return Json::array();
  ProgramView view(doc->compilation->index, doc->compilation->sources, *types_);
  auto offset = static_cast<std::uint32_t>(offset_of(doc->text, position_param(params)));
  return complete(doc->text, offset, view, view.file(doc->path), *types_);
}

Json Server::formatting(const Json& params) {
  Document* doc = document(params);
  if (!doc) return nullptr;
  // What `mlenvc fmt` does; a file that does not parse is left alone (its diagnostics say why).
  SourceManager sources;
  Diagnostics diagnostics;
  FileId file = sources.add(doc->path, doc->text);
  ast::File tree = parse::parse_file(file, sources.file(file).text(), diagnostics);
  if (diagnostics.has_errors()) return nullptr;
  std::string formatted = syntax::format_file(doc->text, tree);
  Json edits = Json::array();
  if (formatted != doc->text) {
    edits.push(Json::object()
                   .set("range", range_json(doc->text, 0, doc->text.size()))
                   .set("newText", formatted));
  }
  return edits;
}

Json Server::symbols(const Json& params) {
  Document* doc = document(params);
  Json list = Json::array();
  if (!doc) return list;
  const check::ProgramIndex& index = doc->compilation->index;
  if (index.files.empty() || !index.files.front().tree) return list;
  const SourceFile& file = doc->compilation->sources.file(index.files.front().file);
  for (const ast::Item& item : index.files.front().tree->items) {
    const auto* decl = boost::get<ast::Decl>(&item);
    if (!decl) continue;
    list.push(Json::object()
                  .set("name", decl->name.name)
                  .set("detail", decl->kind.name)
                  .set("kind", symbol_kind(decl->kind.name))
                  .set("range", range_json(file, decl->begin, decl->end))
                  .set("selectionRange", range_json(file, decl->name.begin, decl->name.end)));
  }
  return list;
}

}  // namespace mlenv::lsp
