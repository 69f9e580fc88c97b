// The devcontainer backend's pure parts: options, the mount plan over grants, held paths
// and denies, the spec file, the engine argv, the probe's pre-check, and the refusal rules
// for a project's devcontainer.json. No container engine runs here.
#include "devcontainer_backend.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "agent_boundary/error.hpp"

namespace agent_boundary::devcontainer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

// A fake filesystem: path -> {dir?, links, real}. Absent paths resolve to themselves.
struct FakeFs {
  struct Entry {
    bool dir = true;
    unsigned long links = 1;
    std::string real;
  };
  std::map<std::string, Entry> entries;

  FakeFs& dir(const std::string& p) {
    entries[p] = {true, 1, {}};
    return *this;
  }
  FakeFs& file(const std::string& p, unsigned long links = 1) {
    entries[p] = {false, links, {}};
    return *this;
  }
  FakeFs& link(const std::string& p, const std::string& target) {
    entries[p] = entries.count(target) ? entries[target] : Entry{};
    entries[p].real = target;
    return *this;
  }
  StatFn stat() const {
    return [this](const std::string& p) {
      PathInfo info;
      info.real = p;
      auto it = entries.find(p);
      if (it == entries.end()) return info;
      info.exists = true;
      info.dir = it->second.dir;
      info.links = it->second.links;
      if (!it->second.real.empty()) info.real = it->second.real;
      return info;
    };
  }
};

const std::string kSession = "/state/sessions/s1";
const std::string kProbe = "/opt/ab/libexec/agent-boundary/probe";

Grant grant(const std::string& p, Access a = Access::readwrite) {
  return {p, a, PathKind::directory, false, "allow"};
}

const Mount* find(const std::vector<Mount>& mounts, const std::string& target) {
  for (const auto& m : mounts)
    if (m.target == target) return &m;
  return nullptr;
}

std::vector<std::string> targets(const std::vector<Mount>& mounts, const std::string& why) {
  std::vector<std::string> out;
  for (const auto& m : mounts)
    if (m.why == why) out.push_back(m.target);
  return out;
}

// -- the mount plan ----------------------------------------------------------------------

TEST(DevcontainerPlan, GrantsAreBoundAtTheirHostPathsWithTheirAccess) {
  FakeFs fs;
  fs.dir("/w").dir("/ref").dir("/out").file(kProbe);
  ResolvedPolicy p;
  p.grants = {grant("/w"), grant("/ref", Access::read), grant("/out", Access::write),
              grant("/proc/self", Access::read)};
  const MountPlan plan = plan_mounts(p, kSession, kProbe, fs.stat());
  ASSERT_NE(find(plan.mounts, "/w"), nullptr);
  EXPECT_FALSE(find(plan.mounts, "/w")->read_only);
  EXPECT_EQ(find(plan.mounts, "/w")->source, "/w");
  EXPECT_TRUE(find(plan.mounts, "/ref")->read_only);
  // A bind mount cannot be write-only: a write grant becomes read-write.
  EXPECT_FALSE(find(plan.mounts, "/out")->read_only);
  // The container has its own /proc, /sys and /dev.
  EXPECT_EQ(find(plan.mounts, "/proc/self"), nullptr);
  ASSERT_NE(find(plan.mounts, kProbe), nullptr);
  EXPECT_TRUE(find(plan.mounts, kProbe)->read_only);
  EXPECT_EQ(find(plan.mounts, kProbe)->why, "probe");
}

TEST(DevcontainerPlan, TheHostRootCannotBeGranted) {
  ResolvedPolicy p;
  p.grants = {grant("/", Access::read)};
  EXPECT_THROW(plan_mounts(p, kSession, kProbe, FakeFs{}.stat()), BackendError);
}

TEST(DevcontainerPlan, PathsTheMountSyntaxCannotCarryAreRefused) {
  ResolvedPolicy p;
  p.grants = {grant("/w,ro=false")};
  try {
    plan_mounts(p, kSession, kProbe, FakeFs{}.stat());
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_THAT(e.message(), HasSubstr("`,`"));
  }
}

TEST(DevcontainerPlan, HeldPathsAreMountedOverTheGrants) {
  FakeFs fs;
  fs.dir("/w").dir("/w/.claude").dir("/w/secret").file("/w/.env").dir("/repo/.git");
  fs.dir("/repo/.git/hooks").file("/repo/.git/config");
  ResolvedPolicy p;
  p.grants = {grant("/w"), grant("/repo/.git")};
  p.held = {{"/w/.claude", PathKind::directory, HeldPath::Hold::read_only},
            {"/w/secret", PathKind::directory, HeldPath::Hold::hidden},
            {"/w/.env", PathKind::file, HeldPath::Hold::hidden},
            {"/repo/.git/hooks", PathKind::directory, HeldPath::Hold::read_only},
            {"/repo/.git/config", PathKind::file, HeldPath::Hold::read_only}};
  const MountPlan plan = plan_mounts(p, kSession, kProbe, fs.stat());
  const Mount* claude = find(plan.mounts, "/w/.claude");
  ASSERT_NE(claude, nullptr);
  EXPECT_EQ(claude->kind, Mount::Kind::bind);
  EXPECT_TRUE(claude->read_only);
  EXPECT_EQ(claude->why, "held");
  const Mount* secret = find(plan.mounts, "/w/secret");
  ASSERT_NE(secret, nullptr);
  EXPECT_EQ(secret->kind, Mount::Kind::tmpfs);  // an empty directory
  EXPECT_TRUE(secret->read_only);
  EXPECT_EQ(secret->why, "hide");
  const Mount* env = find(plan.mounts, "/w/.env");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->kind, Mount::Kind::bind);  // an empty file
  EXPECT_EQ(env->source, kSession + "/" + kEmptyFile);
  EXPECT_TRUE(env->read_only);
  EXPECT_TRUE(find(plan.mounts, "/repo/.git/config")->read_only);
}

TEST(DevcontainerPlan, MountsAreOrderedOuterFirst) {
  FakeFs fs;
  fs.dir("/w").dir("/w/a").dir("/w/a/b").dir("/z");
  ResolvedPolicy p;
  p.grants = {grant("/z"), grant("/w")};
  p.held = {{"/w/a/b", PathKind::directory, HeldPath::Hold::read_only}};
  const MountPlan plan = plan_mounts(p, kSession, "", fs.stat());
  std::vector<std::string> order;
  for (const auto& m : plan.mounts) order.push_back(m.target);
  EXPECT_THAT(order, ElementsAre("/w", "/z", "/w/a", "/w/a/b"));
}

TEST(DevcontainerPlan, DirectoriesAboveAHeldPathArePinnedWithTheirMountsAccess) {
  FakeFs fs;
  fs.dir("/w").dir("/w/x").dir("/w/x/y").dir("/w/x/y/hooks").dir("/w/ro").dir("/w/ro/d");
  fs.file("/w/ro/d/f");
  ResolvedPolicy p;
  p.grants = {grant("/w"), grant("/w/ro", Access::read)};
  p.held = {{"/w/x/y/hooks", PathKind::directory, HeldPath::Hold::read_only},
            {"/w/ro/d/f", PathKind::file, HeldPath::Hold::hidden}};
  const MountPlan plan = plan_mounts(p, kSession, "", fs.stat());
  EXPECT_THAT(targets(plan.mounts, "pin"), ElementsAre("/w/x", "/w/ro/d", "/w/x/y"));
  EXPECT_FALSE(find(plan.mounts, "/w/x")->read_only);
  // Inside a read-only grant a pin stays read-only: a pin never widens.
  EXPECT_TRUE(find(plan.mounts, "/w/ro/d")->read_only);
  // The read-only grant itself is a mount point: no pin replaces it.
  EXPECT_EQ(find(plan.mounts, "/w/ro")->why, "grant");
}

TEST(DevcontainerPlan, DenyStatesSayHowEachDenyIsHeld) {
  FakeFs fs;
  fs.dir("/w").dir("/ref").dir("/ref/keys").file("/ref/token", 2).dir("/home/u/.ssh");
  fs.dir("/w/.claude");
  ResolvedPolicy p;
  p.grants = {grant("/w"), grant("/ref", Access::read)};
  p.held = {{"/w/.claude", PathKind::directory, HeldPath::Hold::read_only}};
  p.denies = {{"/home/u/.ssh", "profile"},              // not mounted at all
              {"/ref/keys", "profile"},                 // present under a read-only grant
              {"/ref/token", "profile"},                // a file with a second hard link
              {"/ref/absent", "profile"},               // absent under a read-only grant
              {"/w/.claude/settings.json", "profile"},  // absent inside a held dir
              {"/w/state", "self-protection"}};         // absent inside a writable grant
  const MountPlan plan = plan_mounts(p, kSession, "", fs.stat());
  ASSERT_EQ(plan.denies.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(plan.denies[i].path, p.denies[i].path);
  EXPECT_EQ(plan.denies[0].enforcement, Enforcement::enforced);
  EXPECT_EQ(plan.denies[1].enforcement, Enforcement::enforced);
  EXPECT_EQ(find(plan.mounts, "/ref/keys")->kind, Mount::Kind::tmpfs);
  EXPECT_EQ(plan.denies[2].enforcement, Enforcement::weaker);
  EXPECT_THAT(plan.denies[2].reason, HasSubstr("2 hard links"));
  EXPECT_EQ(find(plan.mounts, "/ref/token")->source, kSession + "/" + kEmptyFile);
  EXPECT_EQ(plan.denies[3].enforcement, Enforcement::enforced);
  EXPECT_EQ(plan.denies[4].enforcement, Enforcement::enforced);
  EXPECT_EQ(plan.denies[5].enforcement, Enforcement::unenforced);
  EXPECT_THAT(plan.denies[5].reason, HasSubstr("read-write mount /w"));
  EXPECT_EQ(find(plan.mounts, "/home/u/.ssh"), nullptr);
}

TEST(DevcontainerPlan, AHiddenDirectoryCoversTheDeniesAndMountsBelowIt) {
  FakeFs fs;
  fs.dir("/h").dir("/h/state").dir("/h/state/sessions/s1").file("/h/state/sessions/s1/kubeconfig");
  ResolvedPolicy p;
  p.grants = {grant("/h"), grant("/h/state/sessions/s1/kubeconfig", Access::read)};
  // The inner deny comes first: denies are handled outer first anyway.
  p.denies = {{"/h/state/sessions/s1", "self-protection"}, {"/h/state", "self-protection"}};
  const MountPlan plan = plan_mounts(p, "/h/state/sessions/s1", "", fs.stat());
  EXPECT_EQ(plan.denies[0].enforcement, Enforcement::enforced);
  EXPECT_EQ(plan.denies[1].enforcement, Enforcement::enforced);
  EXPECT_EQ(find(plan.mounts, "/h/state")->why, "hide");
  // Nothing can be mounted inside the empty read-only directory.
  EXPECT_EQ(find(plan.mounts, "/h/state/sessions/s1"), nullptr);
  EXPECT_EQ(find(plan.mounts, "/h/state/sessions/s1/kubeconfig"), nullptr);
}

TEST(DevcontainerPlan, ADenyOfAGrantedPathHidesIt) {
  FakeFs fs;
  fs.dir("/w").dir("/w/cache");
  ResolvedPolicy p;
  p.grants = {grant("/w"), grant("/w/cache")};
  p.denies = {{"/w/cache", "profile"}};
  const MountPlan plan = plan_mounts(p, kSession, "", fs.stat());
  EXPECT_EQ(find(plan.mounts, "/w/cache")->why, "hide");
  EXPECT_EQ(plan.denies[0].enforcement, Enforcement::enforced);
}

TEST(DevcontainerPlan, ASymlinkedGrantIsMountedAtBothPathsWithTheSameHolds) {
  FakeFs fs;
  fs.dir("/data/proj").dir("/data/proj/.claude").dir("/data/proj/sub");
  fs.link("/home/u/proj", "/data/proj");
  ResolvedPolicy p;
  p.grants = {grant("/home/u/proj")};
  p.held = {{"/data/proj/.claude", PathKind::directory, HeldPath::Hold::read_only}};
  const MountPlan plan = plan_mounts(p, kSession, "", fs.stat());
  ASSERT_NE(find(plan.mounts, "/data/proj"), nullptr);
  ASSERT_NE(find(plan.mounts, "/home/u/proj"), nullptr);
  const Mount* alias = find(plan.mounts, "/home/u/proj/.claude");
  ASSERT_NE(alias, nullptr) << "the held dir must be held under the spelled path too";
  EXPECT_TRUE(alias->read_only);
  EXPECT_EQ(alias->source, "/data/proj/.claude");
}

// -- options ------------------------------------------------------------------------------

GetEnv env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(DevcontainerOptions, DefaultsWorkWithPodmanAsRootOnDebian) {
  const Options o = read_options({}, EngineKind::podman, env_of({}));
  EXPECT_EQ(o.image, kDefaultImage);
  EXPECT_EQ(o.network, "default");
  EXPECT_THAT(o.engine_args, ElementsAre("--runtime", "runc", "--cgroup-manager", "cgroupfs"));
  EXPECT_THAT(o.ulimits, ElementsAre("nofile=1024:1024", "nproc=4096:4096"));
  EXPECT_TRUE(read_options({}, EngineKind::docker, env_of({})).engine_args.empty());
}

TEST(DevcontainerOptions, TheEnvironmentThenTheProfileBlockOverride) {
  ResolvedPolicy p;
  const auto env = env_of({{"AGENT_BOUNDARY_DEVCONTAINER_IMAGE", "localhost/env:1"},
                           {"AGENT_BOUNDARY_DEVCONTAINER_ENGINE_ARGS", "--runtime crun"},
                           {"AGENT_BOUNDARY_DEVCONTAINER_NETWORK", "none"}});
  Options o = read_options(p, EngineKind::podman, env);
  EXPECT_EQ(o.image, "localhost/env:1");
  EXPECT_THAT(o.engine_args, ElementsAre("--runtime", "crun"));
  EXPECT_EQ(o.network, "none");
  p.backend_options["devcontainer"] = R"({"image": "localhost/profile:2", "network": "default"})";
  o = read_options(p, EngineKind::podman, env);
  EXPECT_EQ(o.image, "localhost/profile:2");
  EXPECT_EQ(o.network, "default");
}

TEST(DevcontainerOptions, MalformedSettingsAreRefusedByName) {
  ResolvedPolicy p;
  p.backend_options["devcontainer"] = R"({"privileged": true})";
  EXPECT_THROW(read_options(p, EngineKind::podman, env_of({})), BackendError);
  EXPECT_THROW(read_options({}, EngineKind::podman,
                            env_of({{"AGENT_BOUNDARY_DEVCONTAINER_NETWORK", "host"}})),
               BackendError);
  EXPECT_THROW(read_options({}, EngineKind::podman,
                            env_of({{"AGENT_BOUNDARY_DEVCONTAINER_IMAGE", "--privileged"}})),
               BackendError);
}

TEST(DevcontainerOptions, TheNonoBlocksNetworkSettingIsFollowed) {
  ResolvedPolicy p;
  p.backend_options["nono"] = R"({"extends": "default", "network": {"block": true}})";
  EXPECT_EQ(read_options(p, EngineKind::podman, env_of({})).network, "none");
  // An explicit choice for the container wins.
  EXPECT_EQ(read_options(p, EngineKind::podman,
                         env_of({{"AGENT_BOUNDARY_DEVCONTAINER_NETWORK", "default"}}))
                .network,
            "default");
  // Domain filtering has no container equivalent: refused, not silently opened.
  p.backend_options["nono"] = R"({"network": {"allow_domain": ["github.com"]}})";
  try {
    read_options(p, EngineKind::podman, env_of({}));
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_THAT(e.message(), HasSubstr("nono.network.allow_domain"));
  }
}

// -- the spec and the engine argv --------------------------------------------------------

Spec sample_spec() {
  Spec s;
  s.session_dir = kSession;
  s.engine = "/usr/bin/podman";
  s.engine_kind = EngineKind::podman;
  s.engine_args = default_engine_args(EngineKind::podman);
  s.image = kDefaultImage;
  s.image_origin = "options";
  s.network = "default";
  s.ulimits = {"nofile=1024:1024", "nproc=4096:4096"};
  s.mounts = {
      {Mount::Kind::bind, "/w", "/w", false, "grant"},
      {Mount::Kind::bind, "/gone", "/gone", true, "grant"},
      {Mount::Kind::tmpfs, {}, "/w/secret", true, "hide"},
      {Mount::Kind::bind, kSession + "/" + kEmptyFile, "/w/.env", true, "hide"},
      {Mount::Kind::bind, kSession + "/kubeconfig", kSession + "/kubeconfig", true, "grant"}};
  return s;
}

TEST(DevcontainerSpec, RoundTripsAndNamesTheContainerByItsContent) {
  Spec s = sample_spec();
  const std::string text = spec_to_json(s);
  const Spec back = spec_from_json(text, "spec");
  EXPECT_EQ(back.name, container_name(s));
  EXPECT_EQ(back.name.rfind(kNamePrefix, 0), 0u);
  EXPECT_EQ(spec_to_json(back), text);
  Spec other = s;
  other.image = "localhost/other:1";
  EXPECT_NE(container_name(other), container_name(s));
  Spec other_session = s;
  other_session.session_dir = "/state/sessions/s2";
  EXPECT_NE(container_name(other_session), container_name(s));
}

TEST(DevcontainerSpec, AnEditedSpecIsCorrupt) {
  std::string text = spec_to_json(sample_spec());
  const auto at = text.find("\"read_only\": true");
  text.replace(at, 17, "\"read_only\": false");
  EXPECT_THROW(spec_from_json(text, "spec"), SessionError);
  EXPECT_THROW(spec_from_json("{}", "spec"), SessionError);
}

TEST(DevcontainerSpec, SessionFilesAreMountedFromTheStagedDirAtStart) {
  EXPECT_EQ(map_to_staged(kSession + "/kubeconfig", kSession, "/state/sessions/.s1.new-1"),
            "/state/sessions/.s1.new-1/kubeconfig");
  EXPECT_EQ(map_to_staged("/w", kSession, "/state/sessions/.s1.new-1"), "/w");
  EXPECT_EQ(map_to_staged(kSession + "x/f", kSession, "/staged"), kSession + "x/f");
  EXPECT_EQ(map_to_staged(kSession + "/kubeconfig", kSession, kSession), kSession + "/kubeconfig");
}

TEST(DevcontainerSpec, RunArgvMountsOnlyWhatExistsAndHidesWithoutCopying) {
  Spec s = sample_spec();
  s.name = container_name(s);
  s.env = {{"FOO", "bar"}};
  FakeFs fs;
  const std::string staged = "/state/sessions/.s1.new-x";
  fs.dir("/w").file(staged + "/" + kEmptyFile).file(staged + "/kubeconfig");
  std::vector<std::string> skipped;
  const auto a = run_argv(s, staged, "/run/x.pid", fs.stat(), &skipped);
  const std::string all = ::testing::PrintToString(a);
  EXPECT_THAT(
      std::vector<std::string>(a.begin(), a.begin() + 6),
      ElementsAre("/usr/bin/podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "run"));
  EXPECT_THAT(all, HasSubstr("\"--name\", \"" + s.name + "\""));
  EXPECT_THAT(all, HasSubstr("\"agent-boundary.session=" + kSession + "\""));
  EXPECT_THAT(all, HasSubstr("\"--pull\", \"never\""));
  EXPECT_THAT(all, HasSubstr("\"--ulimit\", \"nofile=1024:1024\""));
  EXPECT_THAT(all, HasSubstr("\"--conmon-pidfile\", \"/run/x.pid\""));
  EXPECT_THAT(all, HasSubstr("\"--env\", \"FOO=bar\""));
  EXPECT_THAT(all, HasSubstr("type=bind,source=/w,destination=/w\""));
  EXPECT_THAT(all,
              HasSubstr("type=tmpfs,destination=/w/secret,ro=true,tmpfs-mode=0755,notmpcopyup"));
  EXPECT_THAT(all,
              HasSubstr("source=" + staged + "/" + kEmptyFile + ",destination=/w/.env,ro=true"));
  EXPECT_THAT(all, HasSubstr("source=" + staged + "/kubeconfig,destination=" + kSession +
                             "/kubeconfig,ro=true"));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("/gone")));
  EXPECT_THAT(skipped, ElementsAre("/gone"));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("--network")));
  EXPECT_EQ(a[a.size() - 3], kDefaultImage);

  s.engine_kind = EngineKind::docker;
  s.engine_args.clear();
  s.network = "none";
  const std::string docker = ::testing::PrintToString(run_argv(s, staged, "/run/x.pid", fs.stat()));
  EXPECT_THAT(docker, HasSubstr("\"--tmpfs\", \"/w/secret:ro,mode=0755\""));
  EXPECT_THAT(docker, HasSubstr("\"--network\", \"none\""));
  EXPECT_THAT(docker, ::testing::Not(HasSubstr("conmon")));
}

TEST(DevcontainerSpec, ExecPassesVariablesByNameOnly) {
  Spec s = sample_spec();
  s.name = container_name(s);
  const auto a = exec_argv(s, "/w/sub", {"AWS_SESSION_TOKEN", "NETRC", "BAD NAME", "X=1"},
                           {"git", "status"}, false);
  EXPECT_THAT(a, ElementsAre("/usr/bin/podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs",
                             "exec", "-i", "--workdir", "/w/sub", "--env", "AWS_SESSION_TOKEN",
                             "--env", "NETRC", s.name, "git", "status"));
  s.exec_user = "vscode";
  const std::string tty = ::testing::PrintToString(exec_argv(s, "/w", {}, {"sh"}, true));
  EXPECT_THAT(tty, HasSubstr("\"-i\", \"-t\", \"--user\", \"vscode\""));
}

TEST(DevcontainerSpec, TheProbeDeniesWhatTheContainerDoesNotShare) {
  const Spec s = sample_spec();
  EXPECT_EQ(probe_precheck(s, "/w/src/main.cpp"), "");
  EXPECT_THAT(probe_precheck(s, "/root/.ssh/id_rsa"), HasSubstr("not mounted"));
  EXPECT_THAT(probe_precheck(s, "/etc/shadow"), HasSubstr("not mounted"));
  EXPECT_THAT(probe_precheck(s, "/w/secret"), HasSubstr("hidden"));
  EXPECT_THAT(probe_precheck(s, "/w/secret/key"), HasSubstr("hidden"));
  EXPECT_THAT(probe_precheck(s, "/w/.env"), HasSubstr("hidden"));
  EXPECT_EQ(probe_precheck(s, kSession + "/kubeconfig"), "");
  EXPECT_THAT(probe_precheck(s, kSession + "/boundary.json"), HasSubstr("not mounted"));
}

// -- the project's devcontainer.json -----------------------------------------------------

TEST(DevcontainerProject, ImageEnvAndUsersAreTaken) {
  const json c = json::parse(R"({
    "name": "dev", "image": "localhost/proj:1",
    "containerEnv": {"A": "1", "GONE": null}, "remoteEnv": {"B": "2"},
    "remoteUser": "root", "containerUser": "root",
    "customizations": {"vscode": {}}, "postCreateCommand": "make",
    "features": {}, "configFilePath": {"fsPath": "/w/.devcontainer/devcontainer.json"}})");
  const ProjectConfig p = check_project_config(c, "/w/.devcontainer/devcontainer.json");
  EXPECT_EQ(p.image, "localhost/proj:1");
  EXPECT_EQ(p.env, (std::map<std::string, std::string>{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(p.remote_user, "root");
  EXPECT_EQ(p.container_user, "root");
  EXPECT_THAT(p.ignored, ElementsAre("customizations", "features", "name", "postCreateCommand"));
}

TEST(DevcontainerProject, KeysThatWidenTheBoundaryOrRunOnTheHostAreRefusedByName) {
  for (const char* key : {"initializeCommand", "mounts", "runArgs", "privileged", "capAdd",
                          "securityOpt", "workspaceMount", "workspaceFolder", "build", "dockerFile",
                          "dockerComposeFile", "appPort", "features"}) {
    json c = {{"image", "localhost/proj:1"}};
    c[key] = std::string(key) == "privileged" ? json(true)
             : std::string(key) == "features" ? json{{"ghcr.io/x/y:1", json::object()}}
                                              : json::array({"--x"});
    try {
      check_project_config(c, "/w/.devcontainer.json");
      ADD_FAILURE() << key << " was accepted";
    } catch (const SessionError& e) {
      EXPECT_THAT(e.message(), HasSubstr(std::string("`") + key + "`")) << key;
      EXPECT_THAT(e.fix(), HasSubstr(std::string("remove `") + key + "`")) << key;
      EXPECT_EQ(e.where(), "/w/.devcontainer.json");
    }
  }
}

TEST(DevcontainerProject, EveryRefusedKeyIsNamedAndUnknownKeysAreRefused) {
  const json c = json::parse(
      R"({"image": "x:1", "runArgs": ["--privileged"], "initializeCommand": "touch /p",
          "someFutureKey": true})");
  try {
    check_project_config(c, "/w/.devcontainer.json");
    FAIL() << "expected a SessionError";
  } catch (const SessionError& e) {
    EXPECT_THAT(e.message(), HasSubstr("`runArgs`"));
    EXPECT_THAT(e.message(), HasSubstr("`initializeCommand`"));
    EXPECT_THAT(e.message(), HasSubstr("runs a command on the host"));
    EXPECT_THAT(e.message(), HasSubstr("`someFutureKey` is not a key agent-boundary knows"));
  }
}

TEST(DevcontainerProject, ValuesItCannotHonourAreRefused) {
  EXPECT_THROW(check_project_config(json::parse(R"({"name": "x"})"), "f"), SessionError);
  EXPECT_THROW(check_project_config(json::parse(R"({"image": "--rm"})"), "f"), SessionError);
  EXPECT_THROW(check_project_config(json::parse(R"({"image": "x", "containerEnv": {"P":
               "${containerEnv:PATH}:/x"}})"),
                                    "f"),
               SessionError);
  EXPECT_THROW(check_project_config(json::parse(R"({"image": "x", "remoteUser": "a b"})"), "f"),
               SessionError);
  EXPECT_THROW(check_project_config(json::parse(R"({"image": "x", "containerEnv": ["A=1"]})"), "f"),
               SessionError);
}

TEST(DevcontainerProject, LookupFollowsTheCliOrder) {
  char tmpl[] = "/var/tmp/ab-dc-unit-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string w = tmpl;
  EXPECT_EQ(find_project_config(w), std::nullopt);
  std::ofstream(w + "/.devcontainer.json") << "{}";
  EXPECT_EQ(find_project_config(w), w + "/.devcontainer.json");
  ::mkdir((w + "/.devcontainer").c_str(), 0755);
  std::ofstream(w + "/.devcontainer/devcontainer.json") << "{}";
  EXPECT_EQ(find_project_config(w), w + "/.devcontainer/devcontainer.json");
  std::filesystem::remove_all(w);
}

}  // namespace
}  // namespace agent_boundary::devcontainer
