#include "plugin_loader.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <filesystem>

#include "agent_boundary/error.hpp"
#include "agent_boundary/plugin_abi.h"
#include "paths.hpp"

namespace fs = std::filesystem;
namespace dll = boost::dll;

namespace agent_boundary {
namespace {

const char* kind_name(PluginKind k) { return k == PluginKind::backend ? "backend" : "harness"; }

std::string abi_string(std::uint32_t major, std::uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// Plugins are code we run with the user's privileges: refuse anything another user (or a
// sandboxed process) could have written.
void check_file_safe(const std::string& file, const std::string& trusted_dir) {
  if (file.empty() || file[0] != '/')
    throw PluginError("plugin path is not absolute", file, "plugins load only from " + trusted_dir);
  const std::string dir = resolve_existing_prefix(fs::path(file).parent_path().string());
  if (dir != resolve_existing_prefix(trusted_dir))
    throw PluginError("plugin is outside the installed plugin directory " + trusted_dir, file,
                      "install the plugin into " + trusted_dir);
  struct stat lst {};
  if (::lstat(file.c_str(), &lst) == 0 && !S_ISREG(lst.st_mode))
    throw PluginError("refusing a plugin that is not a regular file (a symlink?)", file,
                      "install the plugin file itself into " + trusted_dir);
  for (const std::string& p : {file, dir}) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0)
      throw PluginError("plugin not found", p,
                        "run `agent-boundary plugins` to see what is installed");
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
      throw PluginError("refusing a plugin owned by uid " + std::to_string(st.st_uid), p,
                        "plugins must belong to root or to you");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
      throw PluginError("refusing a group- or world-writable plugin", p, "chmod go-w " + p);
  }
}

struct Loaded {
  std::shared_ptr<dll::shared_library> lib;
  const ab_plugin_descriptor* descriptor = nullptr;
};

// Libraries stay mapped until exit: dlclose is neither reliable nor needed here.
std::vector<std::shared_ptr<dll::shared_library>>& keep_alive() {
  static std::vector<std::shared_ptr<dll::shared_library>> libs;
  return libs;
}

Loaded open_checked(const std::string& file, const std::string& trusted_dir, PluginKind kind,
                    const std::string& expected_name) {
  if (expected_name.empty())
    throw PluginError(std::string("plugin files are named ") + kind_name(kind) + "-<name>.so", file,
                      "rename or remove the file");
  check_file_safe(file, trusted_dir);
  Loaded l;
  try {
    l.lib = std::make_shared<dll::shared_library>(
        fs::path(file), dll::load_mode::rtld_now | dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    throw PluginError(std::string("cannot load plugin: ") + e.what(), file,
                      "reinstall the plugin, built against this agent-boundary");
  }
  keep_alive().push_back(l.lib);
  if (!l.lib->has(AB_PLUGIN_ENTRY_SYMBOL))
    throw PluginError("not an agent-boundary plugin: no " AB_PLUGIN_ENTRY_SYMBOL " symbol", file,
                      "remove it from the plugin directory");
  const auto& d = l.lib->get<const ab_plugin_descriptor>(AB_PLUGIN_ENTRY_SYMBOL);
  const std::string ours = abi_string(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR);
  const std::string fix = "rebuild the plugin against the headers of this agent-boundary (ABI " +
                          ours + ") or install a matching agent-boundary";
  // The version fields come first in every ABI generation: check them before trusting the
  // rest of the layout.
  const std::string theirs = abi_string(d.abi_major, d.abi_minor);
  if (d.abi_major != AB_PLUGIN_ABI_MAJOR || d.abi_minor > AB_PLUGIN_ABI_MINOR)
    throw PluginError("plugin requires plugin ABI " + theirs + ", agent-boundary provides " + ours,
                      file, fix);
  if (d.struct_size < sizeof(ab_plugin_descriptor))
    throw PluginError(
        "plugin descriptor is too small (" + std::to_string(d.struct_size) + " bytes)", file, fix);
  if (!d.toolchain || std::string(d.toolchain) != AB_TOOLCHAIN_FINGERPRINT)
    throw PluginError(std::string("plugin was built for ") + (d.toolchain ? d.toolchain : "?") +
                          ", agent-boundary for " AB_TOOLCHAIN_FINGERPRINT,
                      file, fix);
  if (d.kind != static_cast<std::uint32_t>(kind))
    throw PluginError(std::string("plugin is not a ") + kind_name(kind) + " plugin", file,
                      "select it with the matching option");
  if (!d.name || !d.create || !d.destroy)
    throw PluginError("plugin descriptor is incomplete", file, fix);
  if (expected_name != d.name)
    throw PluginError(
        std::string("plugin names itself `") + d.name + "`, expected `" + expected_name + "`", file,
        "rename the file to match its name");
  l.descriptor = &d;
  return l;
}

// Calls the plugin's factory; exceptions are copied into core errors before the library
// reference can go away.
void* create_object(const Loaded& l, const std::string& file, const PluginHost& host) {
  try {
    void* raw = l.descriptor->create(const_cast<PluginHost*>(&host));
    if (!raw) throw PluginError("plugin factory returned nothing", file);
    return raw;
  } catch (const Error& e) {
    throw PluginError("plugin factory failed: " + e.message(), e.where().empty() ? file : e.where(),
                      e.fix());
  } catch (const std::exception& e) {
    throw PluginError(std::string("plugin factory failed: ") + e.what(), file);
  } catch (...) {
    throw PluginError("plugin factory failed with a non-standard exception", file);
  }
}

// Calls into plugin code: whatever it throws is copied into a core-owned `ErrorT` here,
// while the library is certainly still mapped.
template <typename ErrorT, typename F>
auto guarded(const std::string& plugin, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ErrorT&) {
    throw;
  } catch (const Error& e) {
    throw ErrorT(e.message(), e.where(), e.fix());
  } catch (const std::exception& e) {
    throw ErrorT(plugin + ": " + e.what());
  } catch (...) {
    throw ErrorT(plugin + ": non-standard exception");
  }
}

// A Backend that forwards to the plugin's object and owns its library.
class GuardedBackend final : public Backend {
 public:
  GuardedBackend(std::shared_ptr<Backend> impl, std::string name)
      : impl_(std::move(impl)), name_(std::move(name)) {}
  BackendExecutable locate(const std::string& hint) const override {
    return guarded<BackendError>(name_, [&] { return impl_->locate(hint); });
  }
  void preflight(const BackendExecutable& exe) const override {
    guarded<BackendError>(name_, [&] { impl_->preflight(exe); });
  }
  std::vector<DenyState> deny_state(const ResolvedPolicy& p,
                                    const BackendExecutable& e) const override {
    return guarded<BackendError>(name_, [&] { return impl_->deny_state(p, e); });
  }
  bool holds_paths() const override {
    return guarded<BackendError>(name_, [&] { return impl_->holds_paths(); });
  }
  std::vector<RenderedFile> render(const ResolvedPolicy& p, const SessionView& s) const override {
    return guarded<BackendError>(name_, [&] { return impl_->render(p, s); });
  }
  std::vector<std::string> wrap(const WrapRequest& r) const override {
    return guarded<BackendError>(name_, [&] { return impl_->wrap(r); });
  }
  ProbeResult probe(const ProbeRequest& r) const override {
    return guarded<BackendError>(name_, [&] { return impl_->probe(r); });
  }
  void start(const SessionView& s) const override {
    guarded<BackendError>(name_, [&] { impl_->start(s); });
  }
  void stop(const SessionView& s) const override {
    guarded<BackendError>(name_, [&] { impl_->stop(s); });
  }

 private:
  std::shared_ptr<Backend> impl_;
  std::string name_;
};

class GuardedHarness final : public Harness {
 public:
  GuardedHarness(std::shared_ptr<Harness> impl, std::string name)
      : impl_(std::move(impl)), name_(std::move(name)) {}
  Event event_kind(const std::string& e) const override {
    return guarded<PluginError>(name_, [&] { return impl_->event_kind(e); });
  }
  ToolCall parse_tool_call(const std::string& payload) const override {
    return guarded<PluginError>(name_, [&] { return impl_->parse_tool_call(payload); });
  }
  std::string encode_decision(const std::string& payload, const Decision& d,
                              int& exit_code) const override {
    return guarded<PluginError>(name_,
                                [&] { return impl_->encode_decision(payload, d, exit_code); });
  }
  SessionStartEvent parse_session_start(const std::string& payload) const override {
    return guarded<PluginError>(name_, [&] { return impl_->parse_session_start(payload); });
  }
  std::string finish_session_start(const SessionStartReport& r) const override {
    return guarded<PluginError>(name_, [&] { return impl_->finish_session_start(r); });
  }
  std::vector<std::string> protected_paths() const override {
    return guarded<PluginError>(name_, [&] { return impl_->protected_paths(); });
  }
  WholeAgentFootprint whole_agent_footprint(const std::string& home, const std::string& workdir,
                                            unsigned uid) const override {
    return guarded<PluginError>(name_,
                                [&] { return impl_->whole_agent_footprint(home, workdir, uid); });
  }
  std::string ambient_session_id() const override {
    return guarded<PluginError>(name_, [&] { return impl_->ambient_session_id(); });
  }
  std::string statusline(const std::string& payload,
                         SessionStatus (*lookup)(const std::string&)) const override {
    return guarded<PluginError>(name_, [&] { return impl_->statusline(payload, lookup); });
  }

 private:
  std::shared_ptr<Harness> impl_;
  std::string name_;
};

std::string name_from_file(const std::string& file, PluginKind kind) {
  std::string stem = fs::path(file).filename().string();
  const std::string prefix = std::string(kind_name(kind)) + "-";
  if (stem.starts_with(prefix) && stem.ends_with(".so"))
    return stem.substr(prefix.size(), stem.size() - prefix.size() - 3);
  return {};
}

}  // namespace

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw SystemError("cannot find our own executable: " + ec.message(), "/proc/self/exe");
  return p.string();
}

std::string installed_plugin_dir() {
  return fs::path(self_executable()).parent_path().parent_path().string() + "/" AB_PLUGIN_SUBDIR;
}

std::string installed_helper_dir() {
  return fs::path(self_executable()).parent_path().parent_path().string() + "/" AB_HELPER_SUBDIR;
}

std::string plugin_file(const std::string& dir, PluginKind kind, const std::string& name) {
  // [a-z][a-z0-9_-]{0,31}: a plain identifier that cannot name another directory.
  const bool valid =
      !name.empty() && name.size() <= 32 && name[0] >= 'a' && name[0] <= 'z' &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
      });
  if (!valid)
    throw PluginError("invalid plugin name `" + name + "`", {},
                      "use a name listed by `agent-boundary plugins`");
  return dir + "/" + kind_name(kind) + "-" + name + ".so";
}

std::vector<PluginInfo> list_plugins(const std::string& dir) {
  std::vector<PluginInfo> out;
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    PluginInfo info;
    info.file = file;
    info.kind = name_from_file(file, PluginKind::harness).empty() ? PluginKind::backend
                                                                  : PluginKind::harness;
    info.name = name_from_file(file, info.kind);
    try {
      const Loaded l = open_checked(file, dir, info.kind, info.name);
      info.version = l.descriptor->version ? l.descriptor->version : "";
      info.abi = abi_string(l.descriptor->abi_major, l.descriptor->abi_minor);
    } catch (const Error& e) {
      info.error = e.message();
    }
    out.push_back(info);
  }
  return out;
}

DefaultPluginHost::DefaultPluginHost(std::string helper_dir, bool verbose)
    : helper_dir_(std::move(helper_dir)), verbose_(verbose) {}

std::string DefaultPluginHost::helper_path(const std::string& name) const {
  return helper_dir_ + "/" + name;
}

void DefaultPluginHost::debug(const std::string& message) const {
  if (verbose_) spdlog::debug("{}", message);
}

namespace {

// Load, instantiate, and wrap in the guard class `Guarded` of interface `Interface`.
template <typename Interface, typename Guarded>
std::shared_ptr<Interface> load_plugin(const std::string& file, const std::string& trusted_dir,
                                       const PluginHost& host, PluginKind kind) {
  const std::string name = name_from_file(file, kind);
  const Loaded l = open_checked(file, trusted_dir, kind, name);
  void* raw = create_object(l, file, host);
  auto destroy = l.descriptor->destroy;
  auto lib = l.lib;
  // The deleter is built here, in core, so the shared_ptr's control block never runs
  // plugin code after unmapping; it holds the library until the object is destroyed.
  std::shared_ptr<Interface> impl(static_cast<Interface*>(raw),
                                  [lib, destroy](Interface* object) { destroy(object); });
  return std::make_shared<Guarded>(std::move(impl), name);
}

}  // namespace

std::shared_ptr<Backend> load_backend(const std::string& file, const std::string& trusted_dir,
                                      const PluginHost& host) {
  return load_plugin<Backend, GuardedBackend>(file, trusted_dir, host, PluginKind::backend);
}

std::shared_ptr<Harness> load_harness(const std::string& file, const std::string& trusted_dir,
                                      const PluginHost& host) {
  return load_plugin<Harness, GuardedHarness>(file, trusted_dir, host, PluginKind::harness);
}

}  // namespace agent_boundary
