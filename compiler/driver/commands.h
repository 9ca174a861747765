#pragma once
// The subcommands of mlenvc. Each lives in its own cmd_<name>.cc and returns the exit status.

#include <string>
#include <vector>

namespace mlenv::driver {

using Args = std::vector<std::string>;  ///< the arguments after the subcommand name

int run_check(const Args& args);
int run_fmt(const Args& args);
int run_explain(const Args& args);
int run_plan(const Args& args);     ///< cmd_plan.cc: render, diff, commit the plan
int run_apply(const Args& args);    ///< cmd_apply.cc: apply a committed, fresh plan
int run_destroy(const Args& args);  ///< cmd_destroy.cc: delete an applied env on purpose
int run_build(const Args& args);    ///< cmd_build.cc: render the output tree or object stream
int run_get(const Args& args);      ///< cmd_get.cc: fetch git imports, write mlenv.lock
int run_results(const Args& args);  ///< cmd_results.cc: an acceptance run's result
int run_lsp(const Args& args);      ///< cmd_lsp.cc: the language server (compiler/lsp/)
// The day-2 commands, on an applied env (compiler/day2/).
int run_status(const Args& args);        ///< cmd_status.cc: pods, transport, build, URLs
int run_shell(const Args& args);         ///< cmd_shell.cc: a shell in a rank's pod
int run_logs(const Args& args);          ///< cmd_logs.cc: every rank's log, prefixed
int run_sync(const Args& args);          ///< cmd_sync.cc: a directory into /workspace
int run_port_forward(const Args& args);  ///< cmd_port_forward.cc: debugpy or a service
int run_urls(const Args& args);          ///< cmd_urls.cc: the Route URLs
int run_dev_session(const Args& args);   ///< cmd_dev_session.cc: port-forward + sync --watch

}  // namespace mlenv::driver
