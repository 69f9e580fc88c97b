// agent-boundary: create, inspect and run OS-enforced agent boundaries.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "env_policy.hpp"
#include "paths.hpp"

namespace ab = agent_boundary;
namespace cli = agent_boundary::cli;

namespace {

// `run` and `exec` take a command line of their own; CLI11 would try to parse its options.
// Split argv at the command word and hand everything after it (and after an optional
// `--`) to the command verbatim.
struct Split {
  std::vector<std::string> head;  // argv[1..] up to and including the `run`/`exec` word
  std::vector<std::string> tail;  // the command to run
  std::string command;            // "run", "exec" or empty
  std::string harness;            // run --harness NAME: whole-agent mode
};

Split split_argv(int argc, char** argv) {
  Split s;
  const std::vector<std::string> takes_value = {"--session-dir", "--backend", "--cwd"};
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    s.head.push_back(a);
    if (std::find(takes_value.begin(), takes_value.end(), a) != takes_value.end()) {
      if (i + 1 < argc) s.head.push_back(argv[++i]);
      continue;
    }
    if (!s.command.empty()) {
      // exec: options until `--`.
      if (a == "--") {
        s.head.pop_back();
        ++i;
        break;
      }
      continue;
    }
    if (a == "run") {
      s.command = a;
      ++i;
      for (; i < argc; ++i) {  // run's own options, before the command
        const std::string o = argv[i];
        if (o == "--harness" && i + 1 < argc)
          s.harness = argv[++i];
        else if (o.starts_with("--harness="))
          s.harness = o.substr(10);
        else
          break;
      }
      if (i < argc && std::string(argv[i]) == "--") ++i;
      break;
    }
    if (a == "exec")
      s.command = a;
    else if (!a.empty() && a[0] != '-') {  // another subcommand: CLI11 handles it all
      ++i;
      break;
    }
  }
  if (!s.command.empty())
    for (; i < argc; ++i) s.tail.emplace_back(argv[i]);
  else
    for (; i < argc; ++i) s.head.emplace_back(argv[i]);
  return s;
}

// The first word that is not a global option, or empty.
std::string first_command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--session-dir" || a == "--backend") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] != '-') return a;
  }
  return {};
}

bool is_builtin_command(const std::string& word) {
  for (const char* c : {"status", "on", "off", "use", "reload", "list", "run", "exec", "session",
                        "validate", "schema", "plugins", "compare", "checkpoint"})
    if (word == c) return true;
  return false;
}

int real_main(int argc, char** argv) {
  // `agent-boundary <harness> ...` (e.g. `claude hook PreToolUse`): the hook hot path,
  // dispatched before any other parsing to the installed harness plugin of that name.
  const std::string word = first_command_word(argc, argv);
  if (!word.empty() && !is_builtin_command(word)) {
    std::vector<std::string> rest;
    bool seen = false;
    cli::Globals hg;
    // The backend a new session gets, as for every other command (a hook has no options).
    if (const char* backend = std::getenv("AGENT_BOUNDARY_BACKEND")) hg.backend = backend;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (seen)
        rest.push_back(a);
      else if (a == word)
        seen = true;
      else if (a == "-v" || a == "--verbose")
        hg.verbose = true;
    }
    std::string file;
    try {
      file = cli::harness_plugin_file(word);
    } catch (const ab::Error&) {
      // not a plugin name: CLI11 reports the unknown command below
    }
    struct stat st {};
    if (!file.empty() && ::stat(file.c_str(), &st) == 0)
      return cli::cmd_harness(cli::Context(hg), word, rest);
  }

  Split split = split_argv(argc, argv);

  // The launcher runs on every wrapped command: parse its few options directly.
  if (split.command == "exec") {
    cli::Globals g;
    std::string cwd;
    for (std::size_t i = 0; i < split.head.size(); ++i) {
      const std::string& a = split.head[i];
      const bool has_value = i + 1 < split.head.size();
      if (a == "--session-dir" && has_value)
        g.session_dir = split.head[++i];
      else if (a == "--cwd" && has_value)
        cwd = split.head[++i];
      else if (a == "-v" || a == "--verbose")
        g.verbose = true;
      else if (a != "exec")
        throw ab::UsageError("unexpected argument `" + a + "`", {},
                             "usage: agent-boundary exec --session-dir DIR [--cwd DIR] -- CMD...");
    }
    if (g.session_dir.empty())
      if (const char* env = std::getenv("AGENT_BOUNDARY_SESSION_DIR")) g.session_dir = env;
    if (split.tail.empty())
      throw ab::UsageError("no command to run", {},
                           "usage: agent-boundary exec --session-dir DIR [--cwd DIR] -- CMD...");
    if (!g.session_dir.empty()) g.session_dir = ab::resolve_existing_prefix(g.session_dir);
    return cli::cmd_exec(cli::Context(g), cwd, split.tail);
  }

  // Named explicitly: parse() gets a vector without argv[0], so CLI11 would print
  // `Usage: [OPTIONS]` with no program name.
  CLI::App app{"Create, inspect, and run OS-enforced agent boundaries.", "agent-boundary"};
  app.fallthrough();
  app.set_version_flag("--version", std::string(AB_VERSION));
  cli::Globals g;
  app.add_option("--session-dir", g.session_dir, "session directory (absolute)")
      ->envname("AGENT_BOUNDARY_SESSION_DIR");
  app.add_option("--backend", g.backend, "backend plugin for new sessions (default: nono)")
      ->envname("AGENT_BOUNDARY_BACKEND");
  app.add_flag("-v,--verbose", g.verbose, "debug output on stderr");

  bool json = false;
  auto* status = app.add_subcommand("status", "show the session's profile and state");
  status->add_flag("--json", json, "machine-readable output");
  auto* on = app.add_subcommand("on", "enforce the boundary (state only; the policy stays pinned)");
  auto* off = app.add_subcommand("off", "stop enforcing (normal harness permissions apply)");
  std::string use_profile;
  auto* use = app.add_subcommand("use", "switch the session to another profile (regenerates)");
  use->add_option("profile", use_profile, "profile name")->required();
  auto* reload = app.add_subcommand("reload", "regenerate the session's policy from its profile");
  auto* list = app.add_subcommand("list", "list the profiles");
  auto* checkpoint = app.add_subcommand(
      "checkpoint",
      "neutralise what the sandbox planted for host tools (nested git dirs, configs)");
  auto* run = app.add_subcommand(
      "run",
      "run a command inside the boundary: run [--harness NAME] [--] CMD ARGS... (--harness: "
      "the whole agent, with its own state writable and its settings held)");
  std::string exec_cwd;
  auto* exec =
      app.add_subcommand("exec", "the launcher: exec --session-dir DIR [--cwd DIR] -- CMD...");
  exec->add_option("--cwd", exec_cwd, "working directory of the command");
  auto* session = app.add_subcommand("session", "manage sessions");
  std::string create_dir, create_profile = "default", create_workdir;
  auto* create = session->add_subcommand("create", "create a pinned session in DIR");
  create->add_option("dir", create_dir, "session directory")->required();
  create->add_option("--profile", create_profile, "profile name");
  create->add_option("--workdir", create_workdir, "the agent's working directory");
  std::string stop_dir;
  auto* stop = session->add_subcommand(
      "stop", "stop what the session's backend keeps running (a container); files stay");
  stop->add_option("dir", stop_dir, "session directory (default: --session-dir)");
  session->require_subcommand(1);
  std::vector<std::string> validate_targets;
  auto* validate = app.add_subcommand("validate", "check profiles (names or paths; default: all)");
  validate->add_option("profiles", validate_targets, "profile names or files");
  auto* schema = app.add_subcommand("schema", "print the JSON Schema of the profile format");
  auto* plugins = app.add_subcommand("plugins", "list the installed plugins");
  std::vector<std::string> compare_backends;
  bool compare_json = false;
  int compare_runs = 11;
  auto* compare = app.add_subcommand(
      "compare", "run one corpus of scenarios through every installed backend (or the named ones)");
  compare->add_option("--backend", compare_backends, "a backend to compare (repeatable)");
  compare->add_flag("--json", compare_json, "machine-readable output");
  compare->add_option("--runs", compare_runs, "timing samples per median (default 11)");
  app.require_subcommand(0, 1);

  std::vector<std::string> args = split.head;
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // Quiet by default: only -v shows debug lines, always on stderr (stdout is for results).
  auto logger = spdlog::stderr_logger_st("agent-boundary");
  logger->set_pattern("agent-boundary: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(g.verbose ? spdlog::level::debug : spdlog::level::warn);
  if (!g.session_dir.empty()) g.session_dir = ab::resolve_existing_prefix(g.session_dir);
  cli::Context ctx(g);

  if (*run) {
    if (split.tail.empty()) {
      std::cerr << "usage: agent-boundary run [--] <command> [args...]\n";
      return 2;
    }
    if (!split.harness.empty()) return cli::cmd_run_harness(ctx, split.harness, split.tail);
    return cli::cmd_run(ctx, split.tail);
  }
  if (*exec) {
    if (split.tail.empty())
      throw ab::UsageError("no command to run", {},
                           "usage: agent-boundary exec --session-dir DIR [--cwd DIR] -- CMD...");
    return cli::cmd_exec(ctx, exec_cwd, split.tail);
  }
  if (*on) return cli::cmd_set_state(ctx, "on");
  if (*off) return cli::cmd_set_state(ctx, "off");
  if (*use) return cli::cmd_use(ctx, use_profile);
  if (*reload) return cli::cmd_reload(ctx);
  if (*list) return cli::cmd_list(ctx);
  if (*checkpoint) return cli::cmd_checkpoint(ctx);
  if (*create) return cli::cmd_session_create(ctx, create_dir, create_profile, create_workdir);
  if (*stop) return cli::cmd_session_stop(ctx, stop_dir);
  if (*validate) return cli::cmd_validate(ctx, validate_targets);
  if (*schema) return cli::cmd_schema();
  if (*plugins) return cli::cmd_plugins(ctx);
  if (*compare) return cli::cmd_compare(ctx, compare_backends, compare_json, compare_runs);
  return cli::cmd_status(ctx, json && *status);
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything runs: no LD_PRELOAD & co. for us, the backend or the credential tools.
  ab::env_policy::reexec_without_loader_variables(argv);
  try {
    return real_main(argc, argv);
  } catch (const ab::UsageError& e) {
    std::cerr << ab::render_error(e);
    return 2;
  } catch (const ab::Error& e) {
    std::cerr << ab::render_error(e);
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "agent-boundary: internal error: " << e.what() << "\n";
    return 1;
  }
}
