// Unit tests of the plugin loader (core/src/plugin_loader.cpp) against real test plugins
// (tests/plugins), each broken in one way, plus the shipped nono plugin's export list.
#include "plugin_loader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "agent_boundary/error.hpp"
#include "agent_boundary/plugin_abi.h"
#include "agent_boundary/process.hpp"

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::StartsWith;

namespace agent_boundary {
namespace {

const std::string kPluginDir = AB_TEST_PLUGIN_DIR;
const std::string kHelperDir = "/opt/ab-test/libexec";

std::string plugin(const std::string& file_name) { return kPluginDir + "/" + file_name; }

std::string abi(unsigned major, unsigned minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}
const std::string kCoreAbi = abi(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR);

// What the user sees when a plugin is refused.
struct Refusal {
  std::string message;
  std::string where;
  std::string fix;
  std::string rendered;  // render_error(): what the CLI prints
};

// Loads `file` as a backend and returns the PluginError it must be refused with.
Refusal refuse_backend(const std::string& file, const std::string& trusted_dir = kPluginDir) {
  const DefaultPluginHost host(kHelperDir);
  try {
    auto backend = load_backend(file, trusted_dir, host);
    ADD_FAILURE() << "the loader accepted " << file;
  } catch (const PluginError& e) {
    return {e.message(), e.where(), e.fix(), render_error(e)};
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a PluginError for " << file << ", got: " << e.what();
  }
  return {};
}

// A directory under /var/tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/var/tmp/ab-plugin-loader-test.XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(tmpl).string();
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies the good fake backend into `dir` with `mode`.
std::string copy_fake_backend(const std::string& dir, fs::perms mode) {
  const std::string to = dir + "/backend-fake.so";
  fs::copy_file(plugin("backend-fake.so"), to, fs::copy_options::overwrite_existing);
  fs::permissions(to, mode);
  return to;
}

// Restores the working directory at the end of a test.
class CwdGuard {
 public:
  explicit CwdGuard(const std::string& dir) : saved_(fs::current_path()) { fs::current_path(dir); }
  ~CwdGuard() {
    std::error_code ec;
    fs::current_path(saved_, ec);
  }
  CwdGuard(const CwdGuard&) = delete;
  CwdGuard& operator=(const CwdGuard&) = delete;

 private:
  fs::path saved_;
};

SessionView fake_session() {
  SessionView s;
  s.session_dir = "/var/lib/ab-test/session";
  s.workdir = "/home/dev/project";
  s.executable = {"/opt/fake/bin/fake-sandbox", "1.0.0", {}};
  return s;
}

// ---------------------------------------------------------------------------------------
// The good plugin works through load_backend.

TEST(PluginLoader, GoodBackendAnswersThroughLoadBackend) {
  const DefaultPluginHost host(kHelperDir);
  const std::shared_ptr<Backend> backend =
      load_backend(plugin("backend-fake.so"), kPluginDir, host);
  ASSERT_NE(backend, nullptr);

  const BackendExecutable found = backend->locate("");
  EXPECT_EQ(found.path, kHelperDir + "/fake-sandbox");  // through the host it was given
  EXPECT_EQ(found.version, "1.0.0");
  EXPECT_EQ(backend->locate("/usr/bin/fake").path, "/usr/bin/fake");
  EXPECT_NO_THROW(backend->preflight(found));

  ResolvedPolicy policy;
  policy.profile_name = "default";
  policy.workdir = "/home/dev/project";
  policy.grants.push_back(
      {"/home/dev/project", Access::readwrite, PathKind::directory, false, "allow"});
  policy.denies.push_back({"/home/dev/.ssh", "profile"});
  policy.denies.push_back({"/home/dev/project/.agent-boundary", "self-protection"});
  const std::vector<DenyState> states = backend->deny_state(policy, found);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].path, "/home/dev/.ssh");
  EXPECT_EQ(states[0].origin, "profile");
  EXPECT_EQ(states[0].enforcement, Enforcement::enforced);
  EXPECT_EQ(states[1].path, "/home/dev/project/.agent-boundary");
  EXPECT_EQ(states[1].origin, "self-protection");

  const std::vector<RenderedFile> files = backend->render(policy, fake_session());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, "fake-policy.txt");
  EXPECT_EQ(files[0].content,
            "profile=default\nworkdir=/home/dev/project\ngrant readwrite /home/dev/project\n");
  EXPECT_EQ(backend->render(policy, fake_session())[0].content, files[0].content);

  WrapRequest wrap;
  wrap.session = fake_session();
  wrap.cwd = "/home/dev/project/src";
  wrap.argv = {"ls", "-la"};
  EXPECT_THAT(backend->wrap(wrap), ElementsAre("/opt/fake/bin/fake-sandbox", "--cwd",
                                               "/home/dev/project/src", "--", "ls", "-la"));

  ProbeRequest probe;
  probe.session = fake_session();
  probe.cwd = "/home/dev/project";
  probe.path = "/home/dev/project/README.md";
  EXPECT_EQ(backend->probe(probe).verdict, ProbeResult::Verdict::allowed);
  probe.path = "/home/dev/.ssh/id_ed25519";
  const ProbeResult denied = backend->probe(probe);
  EXPECT_EQ(denied.verdict, ProbeResult::Verdict::denied);
  EXPECT_EQ(denied.detail, "EACCES");
}

TEST(PluginLoader, LoadedObjectOutlivesTheLoadingScope) {
  const DefaultPluginHost host(kHelperDir);
  std::shared_ptr<Backend> backend;
  {
    auto first = load_backend(plugin("backend-fake.so"), kPluginDir, host);
    auto second = load_backend(plugin("backend-fake.so"), kPluginDir, host);
    backend = second;
    first.reset();  // runs the plugin's destroy while the library stays mapped
  }
  EXPECT_EQ(backend->locate("/x").path, "/x");
  backend.reset();
  // Loading again after every object is gone still works.
  EXPECT_EQ(load_backend(plugin("backend-fake.so"), kPluginDir, host)->locate("/y").path, "/y");
}

// ---------------------------------------------------------------------------------------
// Refusals: each names the file and the reason.

TEST(PluginLoader, RefusesNextMajorAbiNamingBothVersions) {
  const std::string file = plugin("backend-abi_major.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message,
              HasSubstr("requires plugin ABI " + abi(AB_PLUGIN_ABI_MAJOR + 1, AB_PLUGIN_ABI_MINOR) +
                        ", agent-boundary provides " + kCoreAbi));
  EXPECT_EQ(r.where, file);
  EXPECT_THAT(r.rendered, HasSubstr(file));
  EXPECT_THAT(r.fix, HasSubstr("rebuild the plugin"));
}

TEST(PluginLoader, RefusesNewerMinorAbiNamingBothVersions) {
  const std::string file = plugin("backend-abi_minor.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message,
              HasSubstr("requires plugin ABI " + abi(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR + 1) +
                        ", agent-boundary provides " + kCoreAbi));
  EXPECT_EQ(r.where, file);
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, RefusesFileWithoutEntrySymbol) {
  const std::string file = plugin("backend-no_entry.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message, HasSubstr("no ab_plugin_entry_v1 symbol"));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, RefusesUnresolvedSymbolAtLoadTime) {
  // Lazily bound, this plugin would load and then kill the process with exit 127 at the
  // factory call; RTLD_NOW must refuse it here, naming the symbol.
  const std::string file = plugin("backend-unresolved.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message, HasSubstr("cannot load plugin"));
  EXPECT_THAT(r.message, HasSubstr("undefined symbol: ab_test_missing_function_xyz"));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, TranslatesPluginLocalFactoryException) {
  const std::string file = plugin("backend-factory_throws.so");
  for (int i = 0; i < 2; ++i) {  // and again: nothing was left half-loaded
    const Refusal r = refuse_backend(file);
    EXPECT_THAT(r.message,
                HasSubstr("plugin factory failed: fake backend refuses to start: no sandbox here"));
    EXPECT_EQ(r.where, file);
    EXPECT_THAT(r.rendered, HasSubstr(file));
  }
}

TEST(PluginLoader, RefusesWrongKind) {
  const std::string file = plugin("backend-wrong_kind.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message, HasSubstr("not a backend plugin"));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, RefusesToolchainFingerprintMismatch) {
  const std::string file = plugin("backend-toolchain.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message, HasSubstr("built for libstdc++7-cxx11abi0"));
  EXPECT_THAT(r.message, HasSubstr("agent-boundary for " AB_TOOLCHAIN_FINGERPRINT));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, RefusesDescriptorNameThatDiffersFromFileName) {
  const std::string file = plugin("backend-misnamed.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message, HasSubstr("plugin names itself `othername`, expected `misnamed`"));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, RefusesRelativePathEvenFromThePluginDir) {
  // Boost.DLL would resolve a bare name against the current directory.
  const CwdGuard cwd(kPluginDir);
  for (const std::string file : {"backend-fake.so", "./backend-fake.so"}) {
    const Refusal r = refuse_backend(file);
    EXPECT_THAT(r.message, HasSubstr("not absolute"));
    EXPECT_EQ(r.where, file);
    EXPECT_THAT(r.rendered, HasSubstr(file));
  }
}

TEST(PluginLoader, RefusesMissingFile) {
  const std::string file = plugin("backend-absent.so");
  const Refusal r = refuse_backend(file);
  EXPECT_THAT(r.message, HasSubstr("not found"));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

TEST(PluginLoader, RefusesFileOutsideTheTrustedDir) {
  const TempDir other;
  const Refusal r = refuse_backend(plugin("backend-fake.so"), other.path());
  EXPECT_THAT(r.message, HasSubstr("outside the installed plugin directory " + other.path()));
  EXPECT_THAT(r.rendered, HasSubstr(plugin("backend-fake.so")));

  // `..` does not lead out of the trusted dir either.
  const TempDir tmp;
  const std::string trusted = tmp.path() + "/plugins";
  fs::create_directory(trusted);
  fs::permissions(trusted, fs::perms(0755));
  copy_fake_backend(tmp.path(), fs::perms(0755));
  const std::string escaping = trusted + "/../backend-fake.so";
  const Refusal up = refuse_backend(escaping, trusted);
  EXPECT_THAT(up.message, HasSubstr("outside the installed plugin directory"));
  EXPECT_THAT(up.rendered, HasSubstr(escaping));
}

TEST(PluginLoader, RefusesGroupOrWorldWritablePlugin) {
  const TempDir trusted;
  const DefaultPluginHost host(kHelperDir);
  const std::string file = copy_fake_backend(trusted.path(), fs::perms(0755));
  // The same copy loads while only its owner can write it...
  EXPECT_EQ(load_backend(file, trusted.path(), host)->locate("/z").path, "/z");

  // ...and is refused once the group can.
  fs::permissions(file, fs::perms(0775));
  Refusal r = refuse_backend(file, trusted.path());
  EXPECT_THAT(r.message, HasSubstr("group- or world-writable"));
  EXPECT_EQ(r.where, file);
  EXPECT_THAT(r.rendered, HasSubstr(file));
  EXPECT_THAT(r.fix, HasSubstr("chmod go-w " + file));

  fs::permissions(file, fs::perms(0757));
  r = refuse_backend(file, trusted.path());
  EXPECT_THAT(r.message, HasSubstr("group- or world-writable"));
}

TEST(PluginLoader, RefusesPluginInGroupWritableDir) {
  const TempDir trusted;
  const std::string file = copy_fake_backend(trusted.path(), fs::perms(0755));
  fs::permissions(trusted.path(), fs::perms(0770));
  const Refusal r = refuse_backend(file, trusted.path());
  EXPECT_THAT(r.message, HasSubstr("group- or world-writable"));
  EXPECT_EQ(r.where, trusted.path());
}

TEST(PluginLoader, RefusesPluginOwnedByAnotherUser) {
  // CI runs as root; elsewhere this case cannot be set up, and under CI=true that fails.
  if (::geteuid() != 0) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL() << "needs root to chown the copy";
    GTEST_SKIP() << "needs root to chown the copy";
  }
  const TempDir trusted;
  const std::string file = copy_fake_backend(trusted.path(), fs::perms(0755));
  ASSERT_EQ(::chown(file.c_str(), 12345, 12345), 0);
  const Refusal r = refuse_backend(file, trusted.path());
  EXPECT_THAT(r.message, HasSubstr("owned by uid 12345"));
  EXPECT_THAT(r.rendered, HasSubstr(file));
}

// ---------------------------------------------------------------------------------------
// Exceptions from a loaded plugin's methods become core BackendErrors.

class GuardedBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = load_backend(plugin("backend-wrap_throws.so"), kPluginDir, host_);
  }
  const DefaultPluginHost host_{kHelperDir};
  std::shared_ptr<Backend> backend_;
};

TEST_F(GuardedBackendTest, PluginLocalExceptionFromWrapBecomesBackendError) {
  WrapRequest request;
  request.session = fake_session();
  request.cwd = "/home/dev/project";
  request.argv = {"ls"};
  try {
    backend_->wrap(request);
    ADD_FAILURE() << "wrap() did not throw";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.kind(), "backend");
    EXPECT_THAT(e.message(), HasSubstr("wrap_throws"));
    EXPECT_THAT(e.message(), HasSubstr("cannot wrap `ls`: fake sandbox is broken"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("fake sandbox is broken"));
  }
  // The plugin is still usable afterwards.
  EXPECT_EQ(backend_->locate("/opt/x").path, "/opt/x");
}

TEST_F(GuardedBackendTest, CoreErrorFromPluginKeepsWhereAndFix) {
  try {
    backend_->preflight({"/opt/fake", "1.0.0", {}});
    ADD_FAILURE() << "preflight() did not throw";
  } catch (const BackendError& e) {
    EXPECT_EQ(e.message(), "fake kernel feature missing");
    EXPECT_EQ(e.where(), "/proc/fake");
    EXPECT_EQ(e.fix(), "enable the fake feature");
  }
}

TEST_F(GuardedBackendTest, NonStandardExceptionBecomesBackendError) {
  ProbeRequest request;
  request.session = fake_session();
  request.path = "/etc/passwd";
  try {
    backend_->probe(request);
    ADD_FAILURE() << "probe() did not throw";
  } catch (const BackendError& e) {
    EXPECT_THAT(e.message(), HasSubstr("wrap_throws"));
    EXPECT_THAT(e.message(), HasSubstr("non-standard exception"));
  }
}

// ---------------------------------------------------------------------------------------
// list_plugins: every *.so of the directory, with its version or the reason it is refused.

TEST(PluginLoader, ListPluginsReportsEachFileWithErrorOrVersion) {
  const std::vector<PluginInfo> infos = list_plugins(kPluginDir);
  std::vector<std::string> names;
  std::map<std::string, PluginInfo> by_file;
  for (const auto& i : infos) {
    names.push_back(fs::path(i.file).filename().string());
    by_file[names.back()] = i;
  }
  // (IsSupersetOf: a stale file from an older build may linger in the build tree.)
  EXPECT_THAT(names,
              IsSupersetOf({"backend-abi_major.so", "backend-abi_minor.so",
                            "backend-factory_throws.so", "backend-fake.so", "backend-misnamed.so",
                            "backend-no_entry.so", "backend-toolchain.so", "backend-unresolved.so",
                            "backend-wrap_throws.so", "backend-wrong_kind.so"}));
  for (const auto& i : infos) EXPECT_THAT(i.file, StartsWith(kPluginDir + "/"));

  const PluginInfo& fake = by_file["backend-fake.so"];
  EXPECT_EQ(fake.kind, PluginKind::backend);
  EXPECT_EQ(fake.name, "fake");
  EXPECT_EQ(fake.version, "1.2.3");
  EXPECT_EQ(fake.abi, kCoreAbi);
  EXPECT_THAT(fake.error, IsEmpty());

  // Listing does not instantiate: a factory that throws or methods that throw look fine.
  EXPECT_THAT(by_file["backend-factory_throws.so"].error, IsEmpty());
  EXPECT_EQ(by_file["backend-factory_throws.so"].version, "0.0.1");
  EXPECT_THAT(by_file["backend-wrap_throws.so"].error, IsEmpty());

  EXPECT_THAT(by_file["backend-abi_major.so"].error,
              HasSubstr("requires plugin ABI " + abi(AB_PLUGIN_ABI_MAJOR + 1, AB_PLUGIN_ABI_MINOR) +
                        ", agent-boundary provides " + kCoreAbi));
  EXPECT_THAT(
      by_file["backend-abi_minor.so"].error,
      HasSubstr("requires plugin ABI " + abi(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR + 1)));
  EXPECT_THAT(by_file["backend-no_entry.so"].error, HasSubstr("no ab_plugin_entry_v1 symbol"));
  EXPECT_THAT(by_file["backend-unresolved.so"].error,
              HasSubstr("undefined symbol: ab_test_missing_function_xyz"));
  EXPECT_THAT(by_file["backend-wrong_kind.so"].error, HasSubstr("not a backend plugin"));
  EXPECT_THAT(by_file["backend-toolchain.so"].error, HasSubstr("libstdc++7-cxx11abi0"));
  EXPECT_THAT(by_file["backend-misnamed.so"].error,
              HasSubstr("names itself `othername`, expected `misnamed`"));
  // Every file is reported either with the reason it is refused or with its version.
  for (const auto& i : infos) {
    if (i.error.empty()) {
      EXPECT_THAT(i.version, Not(IsEmpty())) << i.file;
      EXPECT_EQ(i.abi, kCoreAbi) << i.file;
    } else {
      EXPECT_THAT(i.version, IsEmpty()) << i.file;
    }
  }
}

TEST(PluginLoader, ListPluginsOfMissingDirIsEmpty) {
  EXPECT_THAT(list_plugins("/nonexistent/ab-test/plugins"), IsEmpty());
}

TEST(PluginLoader, ShippedNonoPluginListsCleanly) {
  const std::string dir = fs::path(AB_NONO_PLUGIN).parent_path().string();
  bool seen = false;
  for (const auto& i : list_plugins(dir)) {
    if (i.file != AB_NONO_PLUGIN) continue;
    seen = true;
    EXPECT_EQ(i.name, "nono");
    EXPECT_THAT(i.error, IsEmpty());
    EXPECT_EQ(i.abi, kCoreAbi);
  }
  EXPECT_TRUE(seen) << AB_NONO_PLUGIN << " not listed";
}

// ---------------------------------------------------------------------------------------
// Exports: a finished plugin exports exactly its descriptor.

std::vector<std::string> defined_dynamic_symbols(const std::string& file) {
  ProcessOptions options;
  options.argv = {"/usr/bin/nm", "-D", "--defined-only", file};
  const ProcessResult r = run_process(options);
  EXPECT_TRUE(r.ok()) << "nm failed on " << file << ": " << r.err;
  std::vector<std::string> symbols;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string word, last;
    while (words >> word) last = word;
    if (!last.empty()) symbols.push_back(last);
  }
  return symbols;
}

TEST(PluginExports, ShippedNonoPluginExportsOnlyItsDescriptor) {
  EXPECT_THAT(defined_dynamic_symbols(AB_NONO_PLUGIN), ElementsAre(AB_PLUGIN_ENTRY_SYMBOL));
}

TEST(PluginExports, HelperBuiltTestPluginExportsOnlyItsDescriptor) {
  EXPECT_THAT(defined_dynamic_symbols(plugin("backend-fake.so")),
              ElementsAre(AB_PLUGIN_ENTRY_SYMBOL));
}

}  // namespace
}  // namespace agent_boundary
