// `mlenvc logs` of a Slurm env: the files the job's `--output` and `--error` name, in which
// `srun --label` marked each line with its task, which is the node rank (targets/slurm/).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "compiler/day2/line_stream.h"
#include "compiler/diag/render.h"
#include "targets/slurm/slurm_env.h"
#include "targets/slurm/slurm_jobs.h"

namespace mlenv::plan::day2 {
namespace {

// A log file read from where the last read stopped; `partial` holds a line not yet ended.
struct FollowedFile {
  std::string path;
  off_t offset = 0;
  std::string partial;
};

// What one read takes from a log: a 1 GB log is streamed, never held whole.
constexpr std::size_t kReadChunk = std::size_t{1} << 20;
// The most log text held to group lines by rank; beyond it the groups are printed and begun
// again.
constexpr std::size_t kMaxGrouped = std::size_t{64} << 20;

// Up to kReadChunk bytes of `path` from `offset`. Only a regular file is read, opened without
// blocking: a log linked to /dev/zero never ends and a FIFO would block forever.
std::string read_chunk(const std::string& path, off_t offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return "";
  std::string chunk(kReadChunk, '\0');
  struct stat st {};
  ssize_t n = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                  ? ::pread(fd, chunk.data(), chunk.size(), offset)
                  : 0;
  ::close(fd);
  chunk.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return chunk;
}

// The whole lines of the next chunk of `file` (a last line without a newline only when
// `flush` and the file has no more); `more` says whether the file has more to read now. A
// file the job has not created yet gives none.
std::vector<std::string> new_lines(FollowedFile& file, bool flush, bool& more) {
  std::vector<std::string> lines;
  std::string chunk = read_chunk(file.path, file.offset);
  more = chunk.size() == kReadChunk;
  flush = flush && !more;
  file.offset += static_cast<off_t>(chunk.size());
  file.partial += chunk;
  std::size_t start = 0;
  for (std::size_t end; (end = file.partial.find('\n', start)) != std::string::npos;
       start = end + 1)
    lines.push_back(file.partial.substr(start, end - start));
  file.partial.erase(0, start);
  // A line longer than line_stream's limit is cut into pieces, as the pods' logs are.
  while (file.partial.size() > kMaxLine || (flush && !file.partial.empty())) {
    lines.push_back(file.partial.substr(0, kMaxLine));
    file.partial.erase(0, kMaxLine);
  }
  return lines;
}

// `[N] text` for a line srun labelled with task N, `[job] text` for the batch script's own
// (and slurmstepd's); "" when `rank` asks for another rank.
std::string shown(std::string_view line, const std::optional<int>& rank) {
  slurm::LabelledLine labelled = slurm::parse_labelled_line(line);
  if (rank && labelled.task != rank) return "";
  const std::string prefix = labelled.task ? "[" + std::to_string(*labelled.task) + "] " : "[job] ";
  return prefix + printable(labelled.text) + "\n";
}

// Without -f: each rank's lines in one piece, rank after rank, then the job's own lines; a log
// over kMaxGrouped is grouped so within each kMaxGrouped of its text.
void print_by_rank(std::vector<FollowedFile>& files, const std::optional<int>& rank,
                   std::ostream& out) {
  std::map<int, std::string> by_task;  // the job's own lines under a key after every rank
  std::size_t held = 0;
  auto print_held = [&] {
    for (const auto& [task, text] : by_task) out << text;
    by_task.clear();
    held = 0;
  };
  for (FollowedFile& file : files) {
    for (bool more = true; more;) {
      for (const std::string& line : new_lines(file, true, more)) {
        std::string text = shown(line, rank);
        held += text.size();
        if (!text.empty()) by_task[slurm::parse_labelled_line(line).task.value_or(1 << 30)] += text;
      }
      if (held > kMaxGrouped) print_held();
    }
  }
  print_held();
}

// With -f: lines as the job writes them, until the job has ended (or neither squeue nor sacct
// knows it any more); the state is asked before each read, so the last read sees every line.
void follow(const AppliedEnv& env, std::vector<FollowedFile>& files, const std::optional<int>& rank,
            int timeout_seconds, std::ostream& out) {
  for (;;) {
    std::optional<slurm::JobState> state = slurm::job_state(job_id(env), timeout_seconds);
    const bool ended = !state || state->finished;
    for (FollowedFile& file : files) {
      for (bool more = true; more;) {
        for (const std::string& line : new_lines(file, ended, more)) out << shown(line, rank);
      }
    }
    out.flush();
    if (ended) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

int show_slurm_logs(const AppliedEnv& env, const LogsRequest& request, std::ostream& out,
                    Diagnostics& diagnostics) {
  if (request.rank && !check_rank(env, *request.rank, diagnostics)) return 1;
  std::vector<FollowedFile> files;
  bool any = false;
  for (const std::string& file : slurm::log_files(env.plan.env, job_id(env))) {
    files.push_back({(std::filesystem::path(env.dir) / file).string(), 0, ""});
    any = any || std::filesystem::exists(files.back().path);
  }
  if (request.follow) {
    follow(env, files, request.rank, request.target.timeout_seconds, out);
    return 0;
  }
  if (!any) {
    diagnostics.report(Code::E0752, {},
                       "Slurm job " + job_id(env) + " of `" + env.unit + "` has written no log" +
                           (env.destroyed ? "" : " yet") + ": no `" + files[0].path + "`",
                       env.destroyed ? "the env was destroyed before its job wrote one"
                                     : "see `mlenvc status " + env.unit + "`");
    return 1;
  }
  print_by_rank(files, request.rank, out);
  return 0;
}

}  // namespace mlenv::plan::day2
