#include "compare/runner.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "compare/world.hpp"
#include "freeze/freeze.hpp"
#include "hook_engine.hpp"
#include "secure_file.hpp"

extern char** environ;

namespace agent_boundary::compare {
namespace {

constexpr const char* kRan = "AB-COMPARE-RAN";
constexpr const char* kDone = "AB-COMPARE-DONE";
constexpr const char* kNoTool = "AB-COMPARE-NOTOOL";
constexpr const char* kShell = "/bin/sh";
constexpr const char* kBash = "/bin/bash";  // what a harness's Bash tool is rewritten to run
constexpr int kProbeTimeoutMs = 5000;       // the hook's

// Variables of ours that would change what the launcher exports or which session it uses.
bool dropped(std::string_view entry) {
  for (std::string_view name :
       {"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
        "AWS_DEFAULT_PROFILE=", "AWS_CONFIG_FILE=", "AWS_SHARED_CREDENTIALS_FILE=", "AWS_REGION=",
        "AWS_DEFAULT_REGION=", "AGENT_BOUNDARY_SKIP_CREDENTIALS=", "AGENT_BOUNDARY_SESSION_DIR="})
    if (entry.starts_with(name)) return true;
  return false;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
    text.replace(pos, from.size(), to);
  return text;
}

// The scenario's script inside a frame that tells "did not start", "tool missing",
// "failed" and "succeeded" apart.
std::string framed(const std::string& body, const std::string& tool) {
  std::string s = std::string("echo ") + kRan + "\n";
  if (!tool.empty())
    s += "command -v " + tool + " >/dev/null 2>&1 || { echo " + kNoTool + "; exit 127; }\n";
  s += "(\n" + body + "\n)\nrc=$?\n";
  s += std::string("[ \"$rc\" -eq 0 ] && printf '\\n%s\\n' ") + kDone + "\nexit \"$rc\"\n";
  return s;
}

bool has_line(const std::string& out, const std::string& line) {
  std::size_t pos = 0;
  while ((pos = out.find(line, pos)) != std::string::npos) {
    const bool starts = pos == 0 || out[pos - 1] == '\n';
    const std::size_t end = pos + line.size();
    if (starts && (end == out.size() || out[end] == '\n')) return true;
    pos = end;
  }
  return false;
}

// The last line worth showing of a command's stderr.
std::string last_line(const std::string& err) {
  std::string best;
  std::size_t start = 0;
  while (start < err.size()) {
    std::size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string line = first_line(err.substr(start, end - start), 200);
    if (!line.empty() && !line.starts_with("fix:")) best = line;
    start = end + 1;
  }
  return best;
}

bool file_has(const std::string& path, const std::string& needle) {
  try {
    const auto text = read_file(path, 1 << 20);
    return text && text->find(needle) != std::string::npos;
  } catch (const std::exception&) {
    return false;  // a directory, or unreadable: not written by the scenario
  }
}

struct Observation {
  Verdict verdict = Verdict::error;
  std::string detail;
};

class BackendRun {
 public:
  BackendRun(World& world, const Installation& install, std::shared_ptr<Backend> backend,
             const RunOptions& options)
      : world_(world), install_(install), backend_(std::move(backend)), options_(options) {
    for (char** e = environ; *e; ++e)
      if (!dropped(*e)) env_.emplace_back(*e);
    for (const auto& v : world_.aws_exporter_env()) env_.push_back(v);
    hook_.state_root = world_.state_root();
    hook_.self_exe = install_.self_exe;
    hook_.probe_timeout_ms = kProbeTimeoutMs;
    hook_.probe_through_launcher = options_.probe_through_launcher;
    hook_.backend_for = [b = backend_](const BoundaryConfig&) { return b; };
  }

  Observation observe(const Scenario& s) {
    return s.kind == ScenarioKind::probe ? probe(s) : command(s);
  }

  // One launch through the installed launcher, exactly as a rewritten Bash command.
  ProcessResult launch(const std::vector<std::string>& argv) const {
    ProcessOptions o;
    o.argv = {install_.self_exe, "exec", "--session-dir", world_.session_dir(), "--cwd",
              world_.workdir(),  "--"};
    o.argv.insert(o.argv.end(), argv.begin(), argv.end());
    o.env = env_;
    o.cwd = world_.workdir();
    o.timeout_ms = options_.command_timeout_ms;
    return run_process(o);
  }

  Decision gate(const std::string& path, Access access) const {
    ToolCall call;
    call.session_id = kSessionId;
    call.cwd = world_.workdir();
    call.tool_name = access == Access::read ? "Read" : "Write";
    call.tool_class = ToolClass::path;
    call.path = path;
    call.access = access;
    const Decision d = decide_tool_call(call, hook_);
    // An allowed file tool keeps the session's processes stopped until the harness says the
    // tool is done (freeze.hpp); no tool runs here, so that is now.
    if (d.verdict == Decision::Verdict::allow) freeze::release(world_.session_dir());
    return d;
  }

 private:
  Observation probe(const Scenario& s) const {
    const Decision d = gate(world_.expand(s.target), s.access);
    std::string why = d.reason;
    if (why.starts_with("[gate] ")) why.erase(0, 7);
    if (d.verdict == Decision::Verdict::allow) return {Verdict::allowed, why};
    if (d.verdict == Decision::Verdict::deny) return {Verdict::denied, why};
    return {Verdict::error, "the gate did not decide: " + why};
  }

  Observation command(const Scenario& s) {
    const std::string token = world_.next_token();
    const auto expand = [&](const std::string& t) {
      return world_.expand(replace_all(t, "{token}", token));
    };
    const std::string target = expand(s.target);
    const ProcessResult r =
        launch({kShell, "-c", framed(expand(s.script), s.tool), "sh", target, expand(s.arg)});
    if (r.timed_out)
      return {Verdict::error,
              "timed out after " + std::to_string(options_.command_timeout_ms / 1000) + " s"};
    if (!has_line(r.out, kRan)) {
      std::string why = last_line(r.err);
      if (why.empty())
        why =
            r.signal ? "signal " + std::to_string(r.signal) : "exit " + std::to_string(r.exit_code);
      return {Verdict::error, "the command did not start: " + why};
    }
    if (has_line(r.out, kNoTool)) return {Verdict::error, s.tool + " is missing inside"};
    const bool done = r.ok() && has_line(r.out, kDone);
    const std::string failure =
        last_line(r.err).empty() ? "exit " + std::to_string(r.exit_code) : last_line(r.err);
    switch (s.check) {
      case Check::exit_status:
        return done ? Observation{Verdict::allowed, {}} : Observation{Verdict::denied, failure};
      case Check::output_has:
        if (!done) return {Verdict::denied, failure};
        if (r.out.find(expand(s.expect)) != std::string::npos) return {Verdict::allowed, {}};
        return {Verdict::denied, "opened, but without the content (masked)"};
      case Check::host_has:
      case Check::host_commit: {
        const bool landed =
            s.check == Check::host_has ? file_has(target, token) : world_.head_subject() == token;
        if (landed)
          return {Verdict::allowed, done ? "" : "the command failed, yet the host changed"};
        return {Verdict::denied, done ? "succeeded inside, the host is unchanged" : failure};
      }
    }
    return {Verdict::error, "unknown check"};
  }

  World& world_;
  const Installation& install_;
  std::shared_ptr<Backend> backend_;
  const RunOptions& options_;
  std::vector<std::string> env_;
  HookContext hook_;
};

// No secret in a report, and the world's (removed) root shortened to `<world>`.
std::string scrub(std::string text, const World& world) {
  for (const auto& s : world.secrets())
    if (!s.empty()) text = replace_all(std::move(text), s, "<secret>");
  return replace_all(std::move(text), world.root(), "<world>");
}

void check_interrupt(const RunOptions& o) {
  if (o.interrupted && o.interrupted()) throw UsageError("interrupted");
}

void say(const RunOptions& o, const std::string& line, bool detail = false) {
  if (o.progress) o.progress(line, detail);
}

template <typename F>
double elapsed_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Timing measure(BackendRun& run, const World& world, const RunOptions& o) {
  Timing t;
  t.runs = std::max(1, o.runs);
  std::vector<double> bare, wrapped, probes;
  const std::string readme = world.expand("{wt}/README.md");
  try {
    const std::vector<std::string> truth = {kBash, "-c", "true"};
    // One launch first: its credential export is not what a command usually pays.
    if (!run.launch(truth).ok()) throw BackendError("the wrapped `true` failed");
    for (int i = 0; i < t.runs; ++i) {
      check_interrupt(o);
      ProcessOptions p;
      p.argv = truth;
      bare.push_back(elapsed_ms([&] {
        if (!run_process(p).ok()) throw BackendError("`" + std::string(kBash) + " -c true` failed");
      }));
      wrapped.push_back(elapsed_ms([&] {
        const ProcessResult r = run.launch(truth);
        if (!r.ok()) throw BackendError("the wrapped `true` failed: " + last_line(r.err));
      }));
      probes.push_back(elapsed_ms([&] {
        const Decision d = run.gate(readme, Access::read);
        if (d.verdict != Decision::Verdict::allow)
          throw BackendError("the probe of the workdir was not allowed: " + d.reason);
      }));
    }
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    t.error = e.what();
    return t;
  }
  t.bare_true_ms = median(bare);
  t.wrapped_true_ms = median(wrapped);
  t.probe_ms = median(probes);
  return t;
}

std::string error_text(const Error& e) {
  return e.fix().empty() ? e.message() : e.message() + " (fix: " + e.fix() + ")";
}

void run_session(BackendResult& res, World& world, const Installation& install,
                 const RunOptions& o) {
  const BoundaryConfig config = read_boundary(world.session_dir());
  res.version = config.backend_executable.version;
  res.warnings = config.warnings;
  BackendRun run(world, install, install.load_backend(config.backend_plugin), o);
  const auto& scenarios = corpus();
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    check_interrupt(o);
    const Scenario& s = scenarios[i];
    say(o,
        res.name + ": " + std::to_string(i + 1) + "/" + std::to_string(scenarios.size()) + " " +
            s.id,
        true);
    Cell cell;
    if (s.kind == ScenarioKind::command && !o.commands) {
      cell.detail = "not run";
      res.cells.push_back(cell);
      continue;
    }
    Observation seen;
    try {
      seen = run.observe(s);
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      seen = {Verdict::error, error_text(e)};
    } catch (const std::exception& e) {
      seen = {Verdict::error, e.what()};
    }
    const Judgement j = judge(s.intent, seen.verdict, world.expand(s.target), config.deny_state);
    cell.observed = seen.verdict;
    cell.outcome = j.outcome;
    cell.detail = seen.detail;
    if (!j.why.empty()) cell.detail = j.why + (seen.detail.empty() ? "" : " (" + seen.detail + ")");
    cell.detail = scrub(cell.detail, world);
    res.cells.push_back(cell);
  }
  if (o.timing) {
    say(o, res.name + ": timing (" + std::to_string(o.runs) + " runs)");
    res.timing = measure(run, world, o);
    res.timing->error = scrub(res.timing->error, world);
  }
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

BackendResult run_backend(const std::string& backend, const Installation& install,
                          const std::string& scratch, const RunOptions& o) {
  BackendResult res;
  res.name = backend;
  std::unique_ptr<World> world;
  try {
    say(o, backend + ": building the world");
    world = std::make_unique<World>(scratch + "/" + backend);
  } catch (const Error& e) {
    res.error = "cannot build the world: " + error_text(e);
    return res;
  } catch (const std::exception& e) {
    res.error = std::string("cannot build the world: ") + e.what();
    return res;
  }
  SessionRequest req;
  req.session_dir = world->session_dir();
  req.profile_name = kProfileName;
  req.profiles_dir = world->profiles_dir();
  req.workdir = world->workdir();
  req.backend = backend;
  // Whatever happens from here on, the backend releases what it started for the session.
  const auto stop = [&] {
    const std::string problem = stop_session(req.session_dir, install);
    if (!problem.empty()) res.warnings.push_back("stopping the session: " + problem);
  };
  try {
    say(o, backend + ": creating the session");
    write_session(req, install);
  } catch (const Error& e) {
    stop();
    res.error = "no session: " + scrub(error_text(e), *world);
    return res;
  } catch (const std::exception& e) {
    stop();
    res.error = std::string("no session: ") + e.what();
    return res;
  }
  try {
    run_session(res, *world, install, o);
  } catch (const UsageError&) {
    stop();
    throw;
  } catch (const Error& e) {
    res.error = scrub(error_text(e), *world);
    res.cells.clear();
  } catch (...) {
    stop();
    throw;
  }
  stop();
  return res;
}

}  // namespace agent_boundary::compare
