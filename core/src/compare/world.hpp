// `agent-boundary compare`: the scratch world one backend is compared in, built on the host
// (outside every boundary) and removed afterwards:
//
//   <root>/home/.ssh/id_rsa, .aws/{credentials,config}   fake secrets; static fake AWS keys
//                                                         in the profile `compare`
//   <root>/home/.gitconfig -> dotfiles/gitconfig -> <root>/store/gitconfig   a symlink chain
//   <root>/ro/notes.txt                                   a read-only grant
//   <root>/repo                                           a git repo with one commit
//   <root>/wt                                             its linked worktree: the workdir,
//       private.txt (denied), never.txt (denied, absent), escape -> escape-hop -> ~/.ssh/id_rsa
//   <root>/profiles/compare.yaml                          the profile the corpus intends
//   <root>/state/sessions/                                the session dir
//
// The root must lie outside /tmp and $TMPDIR: backends grant those to every sandbox.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace agent_boundary::compare {

inline constexpr const char* kProfileName = "compare";
inline constexpr const char* kAwsProfile = "compare";
inline constexpr const char* kSessionId = "compare-session";

class World {
 public:
  // Build a new world in `root` (which must not exist; its parent must). Throws Error.
  explicit World(const std::string& root);

  const std::string& root() const { return root_; }
  std::string workdir() const { return vars_.at("wt"); }
  std::string profiles_dir() const { return root_ + "/profiles"; }
  std::string state_root() const { return root_ + "/state"; }
  std::string session_dir() const { return state_root() + "/sessions/" + kSessionId; }

  // Replace every `{name}` placeholder (name: [a-z0-9-]+) with the world's value; an unknown
  // name throws. Other braces (shell `${VAR}`, `{ ...; }`) are left alone.
  std::string expand(const std::string& text) const;

  // Values that must never appear in a report (fake, but treated as real secrets).
  std::vector<std::string> secrets() const;
  // Variables for the launcher, so the AWS exporter it runs outside the boundary reads the
  // world's ~/.aws instead of the user's.
  std::vector<std::string> aws_exporter_env() const;
  // The subject of the worktree's HEAD commit, read on the host ("" when git fails).
  std::string head_subject() const;

  // A fresh value for one scenario's write (so a check never sees an earlier run's).
  std::string next_token();

 private:
  std::string root_;
  std::map<std::string, std::string> vars_;
  unsigned tokens_ = 0;
};

// A private directory outside /tmp and $TMPDIR for the worlds of one run
// (/var/tmp/agent-boundary-compare-XXXXXX), removed with everything in it on destruction.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Remove a tree that may hold read-only directories (best effort, never throws).
void remove_world(const std::string& root);

}  // namespace agent_boundary::compare
