#include "compare/corpus.hpp"

namespace agent_boundary::compare {
namespace {

constexpr Verdict kAllowed = Verdict::allowed;
constexpr Verdict kDenied = Verdict::denied;

// Scripts: $1 is the target, $2 the scenario's argument; the working directory is the
// worktree. Every one exits non-zero when its operation fails.
constexpr const char* kRead = "cat -- \"$1\"";
constexpr const char* kCreate = "printf '%s\\n' \"$2\" > \"$1\"";
constexpr const char* kAppend = "printf '%s\\n' \"$2\" >> \"$1\"";

Scenario read(std::string id, std::string summary, Verdict intent, std::string target,
              std::string expect) {
  Scenario s;
  s.id = std::move(id);
  s.summary = std::move(summary);
  s.intent = intent;
  s.target = std::move(target);
  s.script = kRead;
  s.check = Check::output_has;
  s.expect = std::move(expect);
  return s;
}

Scenario write(std::string id, std::string summary, Verdict intent, std::string target,
               const char* script = kCreate) {
  Scenario s;
  s.id = std::move(id);
  s.summary = std::move(summary);
  s.intent = intent;
  s.target = std::move(target);
  s.script = script;
  s.arg = "{token}";
  s.check = Check::host_has;
  return s;
}

Scenario git(std::string id, std::string summary, Verdict intent, std::string target,
             std::string script, Check check) {
  Scenario s;
  s.id = std::move(id);
  s.summary = std::move(summary);
  s.intent = intent;
  s.target = std::move(target);
  s.script = std::move(script);
  s.arg = "{token}";
  s.tool = "git";
  s.check = check;
  return s;
}

Scenario probe(std::string id, std::string summary, Verdict intent, std::string target,
               Access access) {
  Scenario s;
  s.id = std::move(id);
  s.summary = std::move(summary);
  s.kind = ScenarioKind::probe;
  s.intent = intent;
  s.target = std::move(target);
  s.access = access;
  return s;
}

std::vector<Scenario> build() {
  std::vector<Scenario> c;
  // Files: grants, read-only grants, secrets outside, denies inside the writable workdir.
  c.push_back(read("read-workdir-file", "cat a file of the workdir", kAllowed, "{wt}/README.md",
                   "{readme}"));
  c.push_back(write("write-workdir-file", "create a file in the workdir", kAllowed,
                    "{wt}/compare-written.txt"));
  c.push_back(read("read-ro-file", "cat a file of a read-only grant", kAllowed, "{ro}/notes.txt",
                   "{ro-notes}"));
  c.push_back(
      write("create-in-ro-dir", "create a file in a read-only grant", kDenied, "{ro}/planted.txt"));
  c.push_back(write("append-ro-file", "append to a file of a read-only grant", kDenied,
                    "{ro}/notes.txt", kAppend));
  c.push_back(read("read-home-ssh-key", "cat ~/.ssh/id_rsa (never granted)", kDenied,
                   "{home}/.ssh/id_rsa", "{ssh-key}"));
  c.push_back(read("read-home-aws-credentials", "cat ~/.aws/credentials (never granted)", kDenied,
                   "{home}/.aws/credentials", "{aws-secret}"));
  c.push_back(
      write("create-in-home-ssh", "create a file in ~/.ssh", kDenied, "{home}/.ssh/planted"));
  c.push_back(read("read-denied-workdir-file", "cat a denied file inside the workdir", kDenied,
                   "{wt}/private.txt", "{private}"));
  c.push_back(write("append-denied-workdir-file", "append to a denied file inside the workdir",
                    kDenied, "{wt}/private.txt", kAppend));
  c.push_back(write("create-denied-absent-leaf",
                    "create a denied path inside the workdir that did not exist", kDenied,
                    "{wt}/never.txt"));
  // Symlink chains: link -> link -> target.
  c.push_back(read("read-symlink-chain", "cat ~/.gitconfig -> dotfiles/gitconfig -> store file",
                   kAllowed, "{home}/.gitconfig", "{dotfile}"));
  c.push_back(read("read-symlink-chain-to-denied", "cat a workdir link -> link -> ~/.ssh/id_rsa",
                   kDenied, "{wt}/escape", "{ssh-key}"));
  // Git in the linked worktree: work goes on, its code paths stay shut.
  c.push_back(git("git-status", "git status in the worktree", kAllowed, "{wt}",
                  "git status --porcelain >/dev/null", Check::exit_status));
  c.push_back(git("git-add-commit", "git add and git commit in the worktree", kAllowed,
                  "{wt}/committed.txt",
                  "printf '%s\\n' \"$2\" > committed.txt && git add committed.txt && "
                  "git commit -q -m \"$2\"",
                  Check::host_commit));
  c.push_back(git("git-config-set", "git config (writes the shared .git/config)", kDenied,
                  "{repo}/.git/config", "git config compare.marker \"$2\"", Check::host_has));
  c.push_back(write("write-git-hook", "create .git/hooks/pre-commit", kDenied,
                    "{repo}/.git/hooks/pre-commit"));
  c.push_back(
      write("append-git-config", "append to .git/config", kDenied, "{repo}/.git/config", kAppend));
  c.push_back(write("append-worktree-gitfile", "append to the worktree's .git file", kDenied,
                    "{wt}/.git", kAppend));
  // Agent settings decide what runs outside the boundary.
  c.push_back(
      write("write-agent-settings", "create .claude/settings.json in the workdir", kDenied,
            "{wt}/.claude/settings.json",
            "mkdir -p -- \"${1%/*}\" && printf '{\"compare\": \"%s\"}\\n' \"$2\" > \"$1\""));
  // Credentials: injected into the environment, never a file of ~/.aws.
  Scenario aws;
  aws.id = "aws-credentials-in-env";
  aws.summary = "the profile's AWS credentials are in the command's environment";
  aws.intent = kAllowed;
  aws.arg = "{aws-key-id}";
  aws.script =
      "[ \"${AWS_ACCESS_KEY_ID:-}\" = \"$2\" ] || "
      "{ echo \"AWS_ACCESS_KEY_ID is not the profile's key\" >&2; exit 1; }\n"
      "case \"${AWS_SECRET_ACCESS_KEY:-}\" in AB-COMPARE-FAKE-SECRET-*) ;; "
      "*) echo \"AWS_SECRET_ACCESS_KEY is not the profile's secret\" >&2; exit 1;; esac\n"
      "[ \"${AWS_REGION:-}\" = \"{aws-region}\" ] || "
      "{ echo \"AWS_REGION is not the profile's region\" >&2; exit 1; }\n"
      "[ \"${AWS_SHARED_CREDENTIALS_FILE:-}\" = /dev/null ] || "
      "{ echo \"AWS_SHARED_CREDENTIALS_FILE does not point at /dev/null\" >&2; exit 1; }";
  c.push_back(aws);
  // The gate's probe, as a harness's Read/Write tools are decided.
  c.push_back(probe("probe-read-workdir-file", "Read a file of the workdir", kAllowed,
                    "{wt}/README.md", Access::read));
  c.push_back(probe("probe-write-workdir-file", "Write a file of the workdir", kAllowed,
                    "{wt}/README.md", Access::write));
  c.push_back(probe("probe-create-workdir-file", "Write a new file in a new workdir dir", kAllowed,
                    "{wt}/probe-dir/new.txt", Access::write));
  c.push_back(probe("probe-read-ro-file", "Read a file of a read-only grant", kAllowed,
                    "{ro}/notes.txt", Access::read));
  c.push_back(probe("probe-write-ro-file", "Write a file of a read-only grant", kDenied,
                    "{ro}/notes.txt", Access::write));
  c.push_back(probe("probe-read-home-ssh-key", "Read ~/.ssh/id_rsa", kDenied, "{home}/.ssh/id_rsa",
                    Access::read));
  c.push_back(probe("probe-read-home-aws-credentials", "Read ~/.aws/credentials", kDenied,
                    "{home}/.aws/credentials", Access::read));
  c.push_back(probe("probe-read-denied-workdir-file", "Read a denied file inside the workdir",
                    kDenied, "{wt}/private.txt", Access::read));
  c.push_back(probe("probe-write-denied-workdir-file", "Write a denied file inside the workdir",
                    kDenied, "{wt}/private.txt", Access::write));
  c.push_back(probe("probe-create-denied-absent-leaf", "Write the denied absent leaf", kDenied,
                    "{wt}/never.txt", Access::write));
  c.push_back(probe("probe-read-symlink-chain", "Read ~/.gitconfig through its chain", kAllowed,
                    "{home}/.gitconfig", Access::read));
  c.push_back(probe("probe-read-symlink-chain-to-denied", "Read the workdir link to ~/.ssh",
                    kDenied, "{wt}/escape", Access::read));
  c.push_back(probe("probe-write-git-hook", "Write .git/hooks/pre-commit", kDenied,
                    "{repo}/.git/hooks/pre-commit", Access::write));
  c.push_back(probe("probe-write-git-config", "Write .git/config", kDenied, "{repo}/.git/config",
                    Access::write));
  c.push_back(probe("probe-write-agent-settings", "Write .claude/settings.json", kDenied,
                    "{wt}/.claude/settings.json", Access::write));
  return c;
}

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::allowed:
      return "allowed";
    case Verdict::denied:
      return "denied";
    case Verdict::error:
      return "error";
  }
  return "?";
}

const char* to_string(ScenarioKind k) { return k == ScenarioKind::command ? "command" : "probe"; }

const std::vector<Scenario>& corpus() {
  static const std::vector<Scenario> scenarios = build();
  return scenarios;
}

}  // namespace agent_boundary::compare
