// JSON Schema (draft 2020-12) of the profile format, for editors (yaml-language-server:
// `# yaml-language-server: $schema=...`). Sub-schemas are written inline rather than through
// `$ref`, so older editor validators that ignore keywords beside `$ref` still see every
// description. It must describe exactly what profile.cpp accepts; the unit tests compare
// the two.
#include <nlohmann/json.hpp>
#include <string>

#include "profile.hpp"

namespace agent_boundary {
namespace {

using json = nlohmann::ordered_json;

const char* const kPathSyntax =
    " Each entry is an absolute path; it may start with `~`, and may use $HOME, $WORKDIR, "
    "$TMPDIR, $UID, $XDG_CONFIG_HOME, $XDG_DATA_HOME, $XDG_STATE_HOME and $XDG_CACHE_HOME "
    "(also as ${NAME}). Glob characters `*`, `?` and `[` are expanded when the policy is "
    "generated.";

json path_string(const std::string& description) {
  return json{{"type", "string"}, {"minLength", 1}, {"description", description}};
}

json path_list(const std::string& description) {
  return json{{"type", "array"},
              {"description", description + kPathSyntax},
              {"default", json::array()},
              {"items", path_string("A path.")}};
}

json boolean(const std::string& description, bool def) {
  return json{{"type", "boolean"}, {"description", description}, {"default", def}};
}

json symlink_item() {
  json spec = {{"type", "object"},
               {"description", "A symlink to follow, with the access to grant on every hop."},
               {"additionalProperties", false},
               {"required", json::array({"path"})},
               {"properties",
                {{"path", path_string("The symlink (or plain file) to resolve.")},
                 {"access",
                  {{"type", "string"},
                   {"enum", json::array({"allow", "read", "write"})},
                   {"default", "read"},
                   {"description",
                    "Access granted on each hop of the chain: `allow` (read and write), `read` or "
                    "`write`."}}},
                 {"bypass_protection",
                  boolean("Exempt these paths from the backend's built-in credential denies "
                          "(e.g. nono's deny groups). Use only for paths you mean to expose.",
                          false)}}}};
  return json{
      {"description", "A path string (resolved with read access), or a mapping with options."},
      {"anyOf",
       json::array({path_string("A symlink (or plain file) to resolve, read-only."), spec})}};
}

json build_schema() {
  json props = json::object();
  props["name"] = {{"type", "string"},
                   {"minLength", 1},
                   {"description",
                    "Short name of the profile, used in the generated policy (not checked "
                    "against the file name)."}};
  props["description"] = {{"type", "string"},
                          {"description", "What this boundary is for (informational)."}};
  props["self_edit"] = boolean(
      "When true, agent-boundary's own files (session dir, profiles dir, plugin root, "
      "state root) become writable instead of denied: a soft boundary the agent can "
      "change or switch off.",
      false);
  props["accept_unprotected_denies"] = boolean(
      "Linux only. When the kernel does not let agent-boundary create the user and mount "
      "namespaces that protect git hooks and config, agent settings and profile denies inside "
      "writable directories, run commands anyway with those paths writable (status shows them "
      "DEGRADED) instead of refusing.",
      false);
  props["allow_git_hook_escape"] = boolean(
      "Linux only. Leave the git dir's hooks/ and config (and worktree admin files) writable "
      "inside writable grants. Sandboxed code can then plant a git hook or config that runs "
      "outside the boundary on the next host git command.",
      false);
  props["allow_agent_settings_escape"] = boolean(
      "Linux only. Leave $WORKDIR/.claude writable. Sandboxed code can then add agent hooks "
      "or plugins that run outside the boundary in the next agent session.",
      false);
  props["git_common_dir"] = boolean(
      "Grant the repository's real git common dir, so git works in linked worktrees. "
      "Its hooks then become writable from inside.",
      true);
  props["aws"] = {
      {"type", json::array({"object", "null"})},
      {"description",
       "Per-command AWS credential injection from a named AWS profile; null or absent turns it "
       "off."},
      {"default", nullptr},
      {"additionalProperties", false},
      {"required", json::array({"profile"})},
      {"properties",
       {{"profile",
         {{"type", "string"},
          {"minLength", 1},
          {"description", "AWS profile name (from ~/.aws/config) to export credentials for."}}}}}};
  props["kube"] = {
      {"type", "object"},
      {"description", "Generate a session kubeconfig with the named clusters."},
      {"additionalProperties", false},
      {"properties",
       {{"eks",
         boolean("Include the EKS cluster of the `aws.profile` account (requires `aws`).", false)},
        {"orbstack", boolean("Include the local OrbStack cluster.", false)}}}};
  props["github"] = {
      {"type", json::array({"object", "null"})},
      {"description", "GitHub token injection; null or absent turns it off."},
      {"default", nullptr},
      {"additionalProperties", false},
      {"properties",
       {{"push", boolean("Inject the token from `gh auth token`, so the agent can push. The "
                         "token is then readable inside the boundary.",
                         false)}}}};
  props["allow"] = path_list("Paths granted read and write access (directory or file).");
  props["read"] = path_list("Paths granted read-only access.");
  props["write"] = path_list("Paths granted write-only access.");
  props["deny"] = path_list("Paths denied even when a broader grant covers them.");
  props["resolve_symlinks"] = {
      {"type", "array"},
      {"description",
       "Symlinks whose whole chain is granted, hop by hop (a plain file resolves to itself)." +
           std::string(kPathSyntax)},
      {"default", json::array()},
      {"items", symlink_item()}};
  props["env"] = {
      {"type", "object"},
      {"description",
       "Environment variables set inside the boundary. Values are strings (quote numbers and "
       "booleans); $WORKDIR and $HOME in them are expanded."},
      {"default", json::object()},
      {"patternProperties",
       {{"^[A-Za-z_][A-Za-z0-9_]*$",
         {{"type", "string"}, {"description", "The variable's value."}}}}},
      {"additionalProperties", false}};
  props["keep_secret_env"] = {
      {"type", "array"},
      {"description",
       "Variables of the caller's environment that reach the command although their names "
       "mark them as secrets (*_KEY, *_TOKEN, *SECRET*, *PASSWORD*, *CREDENTIAL*, AWS_*, ...; "
       "removed by default). The cost: the command can read and send them anywhere."},
      {"default", json::array()},
      {"items", {{"type", "string"}, {"pattern", "^[A-Za-z_][A-Za-z0-9_]*$"}}}};
  props["allow_host_sockets"] = {
      {"type", "array"},
      {"description",
       "Host Unix sockets the command may connect to (all others are hidden), by absolute "
       "path or by the variable holding the path (e.g. SSH_AUTH_SOCK, which then also reaches "
       "the command). The cost: whatever that service does for you (an ssh-agent signs as "
       "you, the docker socket is root), the command can ask it to do." +
           std::string(kPathSyntax)},
      {"default", json::array()},
      {"items", {{"type", "string"}}}};
  props["nono"] = {
      {"type", "object"},
      {"description",
       "Raw nono profile keys merged into the generated nono policy (escape hatch), e.g. "
       "`extends: default`. Free-form: its keys are nono's, not agent-boundary's."},
      {"default", json::object()},
      {"additionalProperties", true}};
  props["backend_options"] = {
      {"type", "object"},
      {"description",
       "Options for one backend plugin, keyed by its name (e.g. `devcontainer: {image: ...}`). "
       "Each block is free-form and read only by that backend; `nono:` is the same as "
       "`backend_options: {nono: ...}`."},
      {"default", json::object()},
      {"patternProperties",
       {{"^[a-z][a-z0-9_-]{0,31}$",
         {{"type", "object"},
          {"description", "The options of the backend plugin of that name."},
          {"additionalProperties", true}}}}},
      {"additionalProperties", false}};
  props["backend"] = {
      {"type", "string"},
      {"pattern", "^[a-z][a-z0-9_-]{0,31}$"},
      {"description", "Name of the backend plugin that enforces this profile by default."}};

  json schema = {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"title", "agent-boundary profile"},
      {"description",
       "One agent-boundary profile: the reviewed description of a boundary (what an agent may "
       "read, write and use). Unknown keys, duplicate keys, anchors and quoted booleans are "
       "errors."},
      {"type", "object"},
      {"additionalProperties", false},
      {"required", json::array({"name", "description"})},
      {"properties", props},
      {"if",
       {{"required", json::array({"kube"})},
        {"properties",
         {{"kube",
           {{"required", json::array({"eks"})}, {"properties", {{"eks", {{"const", true}}}}}}}}}}},
      {"then",
       {{"required", json::array({"aws"})}, {"properties", {{"aws", {{"type", "object"}}}}}}}};
  return schema;
}

}  // namespace

std::string profile_json_schema() { return build_schema().dump(2) + "\n"; }

}  // namespace agent_boundary
