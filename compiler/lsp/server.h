#pragma once
// `mlenvc lsp`: a Language Server over stdio. Each open document is checked as the root of a
// program, through the same entry as `mlenvc check` (driver::check_file), on open and on every
// change, and so are the open documents that import it; the editor's text is read before the
// disk. Hover, definition, completion, formatting and symbols read that check's files.

#include <istream>
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "compiler/base/file_system.h"
#include "compiler/check/types.h"
#include "compiler/driver/pipeline.h"
#include "runtime/json.h"

namespace mlenv::lsp {

/// The open documents over the disk: what the checker reads is what the editor holds.
class OverlayFileSystem : public FileSystem {
 public:
  std::optional<std::string> read(const std::string& path, std::string& error) const override;
  std::optional<std::string> read_inside(const std::string& path,
                                         const std::vector<std::string>& folders,
                                         std::string& error) const override;
  std::optional<std::string> foreign_cache(const std::string& folder) const override {
    return disk_.foreign_cache(folder);
  }
  /// Sets (or replaces) the text of an open document.
  void open(const std::string& path, std::string text) { open_[path] = std::move(text); }
  /// Forgets an open document: the disk's copy is read again.
  void close(const std::string& path) { open_.erase(path); }

 private:
  std::map<std::string, std::string> open_;
  DiskFileSystem disk_;
};

/// One open document and its latest check.
struct Document {
  std::string uri;
  std::string path;
  std::string text;
  std::unique_ptr<driver::Compilation> compilation;
};

class Server {
 public:
  /// `stdlib_cache`: the folder the embedded stdlib is written to, read-only, the first time a
  /// definition lies in it (`std/...` files have no place on disk otherwise).
  /// Replies and notifications are written to `out`.
  Server(std::string stdlib_cache, std::ostream& out);

  /// Serves requests read from `in` until `exit`. Returns 0 after `shutdown` then `exit`, 1
  /// when the input ended or `exit` came without `shutdown` (as the protocol asks).
  int run(std::istream& in);
  /// Handles the body of one message as read from the wire (a JSON-RPC error for bad JSON).
  void receive(std::string_view body);
  /// Handles one message: a request is answered, a notification acted on.
  void handle(const boot::Json& message);

 private:
  using Json = boot::Json;

  Json request(const std::string& method, const Json& params, bool& found);
  void notification(const std::string& method, const Json& params);
  void send(const Json& message);

  void check(Document& document);
  void check_importers(const std::string& path);
  void publish(const Document& document);
  Json diagnostic(const Document& document, const Diagnostic& d);

  Json hover(const Json& params);
  Json definition(const Json& params);
  Json completion(const Json& params);
  Json formatting(const Json& params);
  Json symbols(const Json& params);

  Document* document(const Json& params);
  /// The disk path of a loader path (`std/...` lies in the stdlib cache, written on first use).
  std::string disk_path(const std::string& path);
  /// `{uri, range}` of bytes [begin, end) of the loaded file at `path` of `document`'s check.
  Json location(const Document& document, const std::string& path, std::uint32_t begin,
                std::uint32_t end);

  std::ostream& out_;
  std::map<std::string, Document> documents_;  ///< by path
  OverlayFileSystem files_;
  SourceManager type_sources_;
  std::unique_ptr<check::TypeRegistry> types_;
  std::string stdlib_cache_;
  bool stdlib_written_ = false;
  bool shutdown_ = false;
  bool exited_ = false;
};

/// `$XDG_CACHE_HOME/mlenvc/<version>`, else `$HOME/.cache/mlenvc/<version>`, else
/// `$XDG_RUNTIME_DIR/mlenvc/<version>`, else a folder of its own made by mkdtemp: never a
/// fixed path other users can write to.
std::string default_stdlib_cache();

}  // namespace mlenv::lsp
