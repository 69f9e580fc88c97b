// compare: the corpus of core/src/compare through every installed backend (or the ones
// named with --backend), as a verdict matrix and a timing table.
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <iostream>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "compare/report.hpp"
#include "compare/runner.hpp"
#include "compare/world.hpp"

namespace agent_boundary::cli {
namespace {

constexpr int kMaxRuns = 1000;

volatile sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// ^C, SIGTERM and SIGHUP end the run after the current step, so every session is still
// stopped (a container backend keeps one running per session) and every world removed.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~InterruptGuard() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3]{};
};

// The backends to compare: the named ones, else every backend plugin installed (a refused
// plugin is a column that says why).
std::vector<compare::BackendResult> selected(const Context& ctx,
                                             const std::vector<std::string>& names) {
  std::vector<compare::BackendResult> out;
  const auto add = [&](const std::string& name, const std::string& error) {
    if (std::none_of(out.begin(), out.end(), [&](const auto& b) { return b.name == name; }))
      out.push_back({name, {}, error, {}, {}, {}});
  };
  if (!names.empty()) {
    for (const auto& n : names) add(n, {});
    return out;
  }
  for (const auto& p : list_plugins(ctx.install.plugin_dir))
    if (p.kind == PluginKind::backend)
      add(p.name, p.error.empty() ? std::string() : "the plugin is refused: " + p.error);
  return out;
}

}  // namespace

int cmd_compare(const Context& ctx, const std::vector<std::string>& backends, bool json, int runs) {
  if (runs < 1 || runs > kMaxRuns)
    throw UsageError("--runs must be between 1 and " + std::to_string(kMaxRuns), {},
                     "e.g. --runs 11");
  compare::Report report;
  report.runs = runs;
  std::vector<compare::BackendResult> todo = selected(ctx, backends);
  if (todo.empty())
    std::cerr << "agent-boundary: compare: no backend plugin in " << ctx.install.plugin_dir << "\n";

  InterruptGuard guard;
  g_interrupted = 0;
  compare::RunOptions options;
  options.runs = runs;
  options.interrupted = [] { return g_interrupted != 0; };
  const bool verbose = ctx.globals.verbose;
  options.progress = [verbose](const std::string& line, bool detail) {
    if (verbose || !detail) std::cerr << "agent-boundary: compare: " << line << "\n";
  };
  {
    compare::Scratch scratch;
    for (auto& b : todo) {
      if (!b.error.empty()) {
        report.backends.push_back(b);
        continue;
      }
      report.backends.push_back(compare::run_backend(b.name, ctx.install, scratch.path(), options));
    }
  }
  std::cout << (json ? compare::render_json(report) : compare::render_text(report)) << std::flush;
  return compare::passed(report) ? 0 : 1;
}

}  // namespace agent_boundary::cli
