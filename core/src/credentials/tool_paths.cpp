#include "credentials/tool_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"

namespace agent_boundary::credentials {
namespace {

constexpr int kVersionTimeoutMs = 15000;

bool executable_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string find_tool(const std::string& name, const char* override_var,
                      const std::function<bool(const std::string&)>& accept,
                      const std::string& requirement, const std::string& missing,
                      std::string& problem) {
  const char* chosen = std::getenv(override_var);
  if (chosen && *chosen) {
    const std::string p = chosen;
    if (p[0] != '/' || !executable_file(p) || !accept(p))
      throw SessionError(
          std::string(override_var) + "=" + p + " is not " + requirement, p,
          "point " + std::string(override_var) + " at " + requirement + ", or unset it");
    return p;
  }
  for (const auto& p : tool_candidates(name))
    if (executable_file(p) && accept(p)) return p;
  problem = missing + " was found (looked in /usr/bin, /usr/local/bin and PATH; set " +
            override_var + " to choose one)";
  return {};
}

}  // namespace

std::vector<std::string> tool_candidates(const std::string& name) {
  std::vector<std::string> out = {"/usr/bin/" + name, "/usr/local/bin/" + name};
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "";
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    auto colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(pos, colon - pos);
    pos = colon + 1;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.empty() || dir[0] != '/') continue;  // relative entries mean the cwd: never
    const std::string p = (dir == "/" ? "" : dir) + "/" + name;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

bool reports_aws_cli_v2(const std::string& path) {
  ProcessOptions opts;
  opts.argv = {path, "--version"};
  opts.timeout_ms = kVersionTimeoutMs;
  opts.max_output = 16 << 10;
  try {
    const ProcessResult r = run_process(opts);
    return r.ok() && (r.out + r.err).find("aws-cli/2.") != std::string::npos;
  } catch (const std::exception&) {
    return false;
  }
}

std::string find_aws_cli(std::string& problem) {
  return find_tool("aws", kAwsOverride, reports_aws_cli_v2,
                   "an AWS CLI v2 (`aws --version` printing aws-cli/2)", "no AWS CLI v2", problem);
}

std::string find_gh_cli(std::string& problem) {
  return find_tool(
      "gh", kGhOverride, [](const std::string&) { return true; }, "an executable GitHub CLI (gh)",
      "no GitHub CLI (gh)", problem);
}

}  // namespace agent_boundary::credentials
