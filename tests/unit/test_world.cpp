#include "test_world.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "agent_boundary/process.hpp"

namespace fs = std::filesystem;

namespace agent_boundary::testing {

TestWorld::TestWorld() {
  fs::create_directories("/var/tmp/agent-boundary-unit");
  std::string tmpl = "/var/tmp/agent-boundary-unit/w-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  root_ = fs::canonical(tmpl).string();
}

TestWorld::~TestWorld() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string TestWorld::dir(const std::string& rel) const {
  fs::create_directories(path(rel));
  return path(rel);
}

std::string TestWorld::file(const std::string& rel, const std::string& content) const {
  fs::create_directories(fs::path(path(rel)).parent_path());
  std::ofstream(path(rel)) << content;
  return path(rel);
}

std::string TestWorld::symlink(const std::string& rel, const std::string& target) const {
  fs::create_directories(fs::path(path(rel)).parent_path());
  fs::create_symlink(target, path(rel));
  return path(rel);
}

void run_git(const std::string& cwd, std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "-c",
                             "init.defaultBranch=main"});
  ProcessOptions o;
  o.argv = args;
  o.cwd = cwd;
  const auto r = run_process(o);
  if (!r.ok()) ADD_FAILURE() << "git failed: " << r.err;
}

}  // namespace agent_boundary::testing
