#include "targets/common/dockerfile.h"

#include <algorithm>
#include <cctype>

#include "compiler/base/version.h"

namespace mlenv::target {
namespace {

// Versions of the tools the compiler installs itself, pinned so a rebuild is the same image.
constexpr const char* kCodeServerVersion = "4.96.4";
constexpr const char* kJupyterLab = "jupyterlab==4.3.5";
constexpr const char* kTensorBoard = "tensorboard==2.18.0";
constexpr const char* kDebugpy = "debugpy==1.8.12";

bool is_shell_safe(const std::string& word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '/' || c == ':' || c == '=' || c == '+' || c == '@' ||
           c == ',';
  });
}

std::string shell_quote(const std::string& word) {
  if (is_shell_safe(word)) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string words(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    out += " \\\n      ";
    out += shell_quote(s);
  }
  return out;
}

// The length of a `${NAME}` (NAME a POSIX variable name) starting at `at`, or 0.
std::size_t variable_length(const std::string& value, std::size_t at) {
  if (value.compare(at, 2, "${") != 0) return 0;
  std::size_t i = at + 2;
  auto letter = [](char c) { return c == '_' || std::isalpha(static_cast<unsigned char>(c)); };
  if (i >= value.size() || !letter(value[i])) return 0;
  while (i < value.size() &&
         (letter(value[i]) || std::isdigit(static_cast<unsigned char>(value[i]))))
    ++i;
  return i < value.size() && value[i] == '}' ? i + 1 - at : 0;
}

// An ENV value in the Dockerfile's double-quoted form. ENV is read by the Dockerfile's own
// word lexer, not a shell (moby/buildkit frontend/dockerfile/shell/lex.go, which buildah's
// imagebuilder vendors): inside "..." only `\"`, `\\` and `\$` are escapes, and `$` would
// otherwise expand a build variable. `${NAME}` alone is left for ENV to expand, as Docker does
// (`PATH = "/opt/venv/bin:\${PATH}"` extends the base image's PATH); every other `$` is
// literal. A line break cannot be written at all (the parser splits instructions at newlines
// first), so `check` refuses it (E0316).
std::string env_value(const std::string& value) {
  if (is_shell_safe(value)) return value;
  std::string out = "\"";
  for (std::size_t i = 0; i < value.size(); ++i) {
    std::size_t name = variable_length(value, i);
    if (name != 0) {
      out.append(value, i, name);
      i += name - 1;
      continue;
    }
    char c = value[i];
    if (c == '"' || c == '\\' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

// One `run` step as one RUN instruction. A one-line step is written as it is (RUN's shell form
// hands it to /bin/sh -c unchanged). A multi-line step (a heredoc) cannot be written line by
// line: every newline ends the instruction, and joining lines with `; \` breaks `if`/`then`,
// lines that end in `\` and shell heredocs. So the script is rebuilt byte for byte by printf
// from single-quoted lines, each on its own continued Dockerfile line, and run by `sh -e` (a
// failing line fails the build, as `set -e`). Docker and buildah only join `\`-newline and
// never look inside the quotes; no Dockerfile heredoc (`RUN <<EOF`) is used, since buildah
// supports those only in recent versions.
std::string run_instruction(const std::string& step) {
  std::string script = step;
  while (!script.empty() && script.back() == '\n') script.pop_back();
  bool simple = !script.empty() && script.find('\n') == std::string::npos &&
                script.back() != '\\' && script.find_first_not_of(" \t") != std::string::npos;
  if (simple) return "RUN " + script + "\n";
  std::string out = "RUN sh -ec \"$(printf '%s\\n' \\\n";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = script.find('\n', start);
    std::string line =
        script.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out += "      '";
    for (char c : line) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += "' \\\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out + "    )\"\n";
}

bool has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string dockerfile(const EnvLayout& layout, const std::string& build_command) {
  const ir::Env& env = *layout.env;
  const ir::Image& image = env.image;
  const std::vector<std::string>& tools = layout.image_tools;
  std::vector<std::string> pip_tools;
  if (has(tools, "jupyter")) pip_tools.push_back(kJupyterLab);
  if (has(tools, "tensorboard")) pip_tools.push_back(kTensorBoard);
  if (has(tools, "debugpy")) pip_tools.push_back(kDebugpy);

  std::string d;
  // Nothing of the env: every env that runs the image holds the same bytes (image identity).
  d += "# Generated by mlenvc " + std::string(kCompilerVersion) + " for image `" +
       layout.image_tag + "` (`image " + image.name +
       "`). Do not edit: change the .mlenv source.\n";
  d += "# Built by: " + build_command + ".\n\n";
  d += "# Stage 1: mlenv-boot, compiled against the base image's own CUDA and NCCL.\n";
  d += "FROM " + image.from + " AS mlenv-boot\n";
  // The compiler comes from the base image's own package manager: Debian and Ubuntu (NGC) or
  // RHEL and UBI; this stage is discarded, only the binary is copied on.
  d += "USER 0\n";
  d +=
      "RUN if command -v apt-get > /dev/null; then \\\n"
      "      apt-get update && apt-get install -y --no-install-recommends cmake g++ make \\\n"
      "      && rm -rf /var/lib/apt/lists/*; \\\n"
      "    elif command -v dnf > /dev/null; then dnf install -y cmake gcc-c++ make; \\\n"
      "    elif command -v microdnf > /dev/null; then microdnf install -y cmake gcc-c++ make; \\\n"
      "    else echo 'mlenv-boot: the base image has no apt-get, dnf or microdnf' >&2; exit 1; \\\n"
      "    fi\n";
  d += "COPY " + std::string(kRuntimeDir) + "/ /src/mlenv/\n";
  d += "RUN cmake -S /src/mlenv -B /build -DCMAKE_BUILD_TYPE=Release -DMLENV_WERROR=OFF \\\n"
       " && cmake --build /build --target mlenv-boot -j\"$(nproc)\" \\\n"
       " && install -m 0755 \"$(find /build -type f -name mlenv-boot | head -n 1)\" "
       "/usr/local/bin/mlenv-boot\n\n";
  d += "# Stage 2: the environment.\n";
  d += "FROM " + image.from + "\n";
  d += "USER 0\n";
  if (!image.apt.empty()) {
    d += "RUN apt-get update \\\n && apt-get install -y --no-install-recommends" +
         words(image.apt) + " \\\n && rm -rf /var/lib/apt/lists/*\n";
  }
  if (!image.pip.empty()) d += "RUN pip install --no-cache-dir" + words(image.pip) + "\n";
  if (!pip_tools.empty()) d += "RUN pip install --no-cache-dir" + words(pip_tools) + "\n";
  if (has(tools, "code-server")) {
    d += "RUN curl -fsSL https://code-server.dev/install.sh \\\n"
         "  | sh -s -- --method standalone --prefix /usr/local --version " +
         std::string(kCodeServerVersion) + "\n";
  }
  for (const auto& [key, value] : image.env) d += "ENV " + key + "=" + env_value(value) + "\n";
  for (const std::string& step : image.run) d += run_instruction(step);
  d += "COPY --from=mlenv-boot /usr/local/bin/mlenv-boot /usr/local/bin/mlenv-boot\n";
  // `oc exec` and `oc rsh` shells start from the container's environment, not mlenv-boot's:
  // they read what it decided (NCCL_*, MASTER_ADDR, ranks) from the file it writes. Login
  // shells read /etc/profile.d, interactive bash /etc/bash.bashrc (Debian, Ubuntu) or
  // /etc/bashrc (RHEL), and an interactive POSIX sh (`oc rsh`'s /bin/sh) reads $ENV.
  d += "RUN echo 'if [ -r " + std::string(kShellEnvDir) + "/env.sh ]; then . " +
       std::string(kShellEnvDir) +
       "/env.sh; fi' > /etc/profile.d/mlenv.sh \\\n"
       " && for rc in /etc/bash.bashrc /etc/bashrc; do \\\n"
       "      if [ -f \"$rc\" ]; then echo '. /etc/profile.d/mlenv.sh' >> \"$rc\"; fi; \\\n"
       "    done\n";
  d += "ENV ENV=/etc/profile.d/mlenv.sh\n";
  // OpenShift runs pods with an arbitrary UID in group 0, Kubernetes with the image's user:
  // group-0-writable work directories serve both.
  d += "RUN mkdir -p /workspace /datasets /etc/mlenv \\\n"
       " && chgrp -R 0 /workspace /datasets \\\n"
       " && chmod -R g=u /workspace /datasets\n";
  d += "USER " + std::to_string(kImageUid) + "\n";
  d += "WORKDIR /workspace\n";
  d += "ENTRYPOINT [\"/usr/local/bin/mlenv-boot\"]\n";
  d += "CMD [\"--config\", \"/etc/mlenv/boot.json\"]\n";
  return d;
}

}  // namespace mlenv::target
