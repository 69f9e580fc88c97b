#include "credentials/kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "agent_boundary/error.hpp"
#include "paths.hpp"
#include "secure_file.hpp"

namespace agent_boundary::credentials {
namespace {

constexpr std::size_t kMaxSourceBytes = 16 << 20;
constexpr int kMaxProfileChain = 16;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool all_digits(const std::string& s, std::size_t n) {
  return s.size() == n &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool all_of_chars(const std::string& s, const char* extra) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || std::strchr(extra, c) != nullptr;
  });
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const auto next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) return out;
    pos = next + 1;
  }
}

// -- the AWS config file (configparser rules, no interpolation) ----------------------------

using Section = std::map<std::string, std::string>;

struct AwsConfig {
  std::map<std::string, Section> profiles;      // "default" and "profile NAME" sections
  std::map<std::string, Section> sso_sessions;  // "sso-session NAME" sections
};

std::string unquote(std::string s) {
  s = trim(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return s;
}

AwsConfig parse_aws_config(const std::string& text) {
  AwsConfig cfg;
  Section* current = nullptr;
  std::string last_key;
  for (std::string line : split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (line[0] == ' ' || line[0] == '\t') continue;  // a continuation (nested s3 = ...)
    if (t[0] == '[') {
      const auto close = t.find(']');
      const std::string name =
          trim(t.substr(1, close == std::string::npos ? std::string::npos : close - 1));
      current = nullptr;
      if (name == "default") {
        current = &cfg.profiles["default"];
      } else if (name.starts_with("profile") && name.size() > 7 &&
                 std::isspace(static_cast<unsigned char>(name[7]))) {
        current = &cfg.profiles[unquote(name.substr(8))];
      } else if (name.starts_with("sso-session") && name.size() > 11 &&
                 std::isspace(static_cast<unsigned char>(name[11]))) {
        current = &cfg.sso_sessions[unquote(name.substr(12))];
      }
      continue;
    }
    if (!current) continue;
    const auto sep = t.find_first_of("=:");
    if (sep == std::string::npos) continue;
    (*current)[lower(trim(t.substr(0, sep)))] = trim(t.substr(sep + 1));
  }
  return cfg;
}

std::string value_of(const Section& s, const char* key) {
  const auto it = s.find(key);
  return it == s.end() ? std::string() : it->second;
}

// arn:<partition>:iam::<account>:role/<name>
std::optional<std::string> role_account(const std::string& arn) {
  const auto parts = split(arn, ':');
  if (parts.size() != 6 || parts[0] != "arn" || parts[2] != "iam" || !parts[3].empty() ||
      !all_digits(parts[4], 12) || !parts[5].starts_with("role/"))
    return std::nullopt;
  return parts[4];
}

std::optional<std::string> account_of(const AwsConfig& cfg, const std::string& profile,
                                      std::set<std::string>& visited) {
  if (!visited.insert(profile).second || visited.size() > kMaxProfileChain) return std::nullopt;
  const auto it = cfg.profiles.find(profile);
  if (it == cfg.profiles.end()) return std::nullopt;
  const Section& s = it->second;
  // The identity a profile ends up with: an assumed role's account first.
  if (auto acct = role_account(value_of(s, "role_arn"))) return acct;
  for (const char* key : {"sso_account_id", "aws_account_id"})
    if (const std::string v = value_of(s, key); all_digits(v, 12)) return v;
  if (const std::string session = value_of(s, "sso_session"); !session.empty()) {
    const auto ss = cfg.sso_sessions.find(session);
    if (ss != cfg.sso_sessions.end())
      if (const std::string v = value_of(ss->second, "sso_account_id"); all_digits(v, 12)) return v;
  }
  if (const std::string source = value_of(s, "source_profile"); !source.empty())
    return account_of(cfg, source, visited);
  return std::nullopt;
}

// -- kubeconfig ----------------------------------------------------------------------------

struct Eks {
  std::string region, account, name;
};

// arn:<partition>:eks:<region>:<account>:cluster/<name>
std::optional<Eks> parse_eks_arn(const std::string& arn) {
  const auto parts = split(arn, ':');
  if (parts.size() != 6 || parts[0] != "arn" || !all_of_chars(parts[1], "-") || parts[2] != "eks" ||
      !all_of_chars(parts[3], "-") || !all_digits(parts[4], 12) ||
      !parts[5].starts_with("cluster/"))
    return std::nullopt;
  const std::string name = parts[5].substr(8);
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
      }))
    return std::nullopt;
  return Eks{parts[3], parts[4], name};
}

struct Named {
  std::string name;
  YAML::Node node;  // the whole list item ({name, cluster|context|user})
};

std::vector<Named> named_entries(const YAML::Node& root, const char* key, const char* payload,
                                 const std::string& source, std::vector<std::string>& warnings) {
  std::vector<Named> out;
  const YAML::Node list = root[key];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) {
    warnings.push_back("source kubeconfig " + source + ": `" + key + "` is not a list; ignored");
    return out;
  }
  for (const auto& item : list) {
    if (!item.IsMap() || !item["name"] || !item["name"].IsScalar() || !item[payload] ||
        !item[payload].IsMap())
      continue;  // a malformed entry is one we cannot copy, not a reason to fail
    out.push_back({item["name"].Scalar(), item});
  }
  return out;
}

// A plain scalar that YAML (1.1, as kubectl's parser reads it) would not take as a string.
bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  static const std::set<std::string> words = {"true", "false", "yes", "no",   "on",
                                              "off",  "y",     "n",   "null", "~"};
  if (words.count(lower(s))) return true;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
           c == 'e' || c == 'E' || c == 'x' || c == 'o' || c == '_' || c == ':';
  });
}

// Emit `n` keeping each scalar's type: scalars quoted in the source (tag "!") stay quoted,
// plain ones stay plain, ours are quoted when they would read as something else.
void emit(YAML::Emitter& out, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& kv : n) {
        out << YAML::Key;
        emit(out, kv.first);
        out << YAML::Value;
        emit(out, kv.second);
      }
      out << YAML::EndMap;
      return;
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const auto& item : n) emit(out, item);
      out << YAML::EndSeq;
      return;
    case YAML::NodeType::Scalar: {
      const std::string& tag = n.Tag();
      const bool quote = tag == "?" ? false : (tag.empty() ? needs_quotes(n.Scalar()) : true);
      if (quote) out << YAML::DoubleQuoted;
      out << n.Scalar();
      return;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out << YAML::Null;
      return;
  }
}

YAML::Node str(const std::string& s) { return YAML::Node(s); }

}  // namespace

std::optional<std::string> aws_account_id(const std::string& text, const std::string& profile) {
  std::set<std::string> visited;
  return account_of(parse_aws_config(text), profile, visited);
}

KubeconfigResult build_kubeconfig(const KubeconfigRequest& r) {
  KubeconfigResult result;
  if (!r.eks && !r.orbstack) return result;
  auto& warnings = result.warnings;
  if (!r.source_text) {
    warnings.push_back("no source kubeconfig at " + r.source_path + "; no kube access");
    return result;
  }
  YAML::Node root;
  try {
    root = YAML::Load(*r.source_text);
  } catch (const YAML::Exception& e) {
    warnings.push_back("cannot read the source kubeconfig " + r.source_path + " (line " +
                       std::to_string(e.mark.line + 1) + ": " + e.msg + "); no kube access");
    return result;
  }
  if (!root.IsMap()) {
    warnings.push_back("the source kubeconfig " + r.source_path +
                       " is not a kubeconfig (not a mapping); no kube access");
    return result;
  }
  const auto clusters = named_entries(root, "clusters", "cluster", r.source_path, warnings);
  const auto contexts = named_entries(root, "contexts", "context", r.source_path, warnings);
  const auto users = named_entries(root, "users", "user", r.source_path, warnings);

  YAML::Node out_clusters(YAML::NodeType::Sequence), out_contexts(YAML::NodeType::Sequence),
      out_users(YAML::NodeType::Sequence);
  std::string current;

  if (r.eks) {
    const auto account =
        r.aws_config_text ? aws_account_id(*r.aws_config_text, r.aws_profile) : std::nullopt;
    if (!account) {
      warnings.push_back("could not find an account ID for aws profile '" + r.aws_profile +
                         "' in " + r.aws_config_path + "; no EKS cluster");
    } else {
      std::vector<std::pair<const Named*, Eks>> matches;
      for (const auto& c : clusters)
        if (auto eks = parse_eks_arn(c.name); eks && eks->account == *account)
          matches.emplace_back(&c, *eks);
      if (matches.size() != 1) {
        warnings.push_back("aws profile '" + r.aws_profile + "' maps to " +
                           std::to_string(matches.size()) + " EKS clusters in " + r.source_path +
                           "; no EKS cluster");
      } else {
        const auto& [cluster, eks] = matches[0];
        out_clusters.push_back(YAML::Clone(cluster->node));
        const std::string context_name = "agent-boundary-" + eks.name;
        YAML::Node ctx(YAML::NodeType::Map);
        ctx["name"] = str(context_name);
        ctx["context"]["cluster"] = str(cluster->name);
        ctx["context"]["user"] = str(kEksUser);
        out_contexts.push_back(ctx);
        YAML::Node exec(YAML::NodeType::Map);
        exec["apiVersion"] = str("client.authentication.k8s.io/v1beta1");
        exec["command"] = str(r.aws_command);
        YAML::Node args(YAML::NodeType::Sequence);
        for (const std::string& a : {std::string("--region"), eks.region, std::string("eks"),
                                     std::string("get-token"), std::string("--cluster-name"),
                                     eks.name, std::string("--output"), std::string("json")})
          args.push_back(str(a));
        exec["args"] = args;
        exec["interactiveMode"] = str("Never");
        YAML::Node user(YAML::NodeType::Map);
        user["name"] = str(kEksUser);
        user["user"]["exec"] = exec;
        out_users.push_back(user);
        current = context_name;
      }
    }
  }

  if (r.orbstack) {
    const auto only = [](const std::vector<Named>& list) -> const Named* {
      const Named* found = nullptr;
      for (const auto& e : list) {
        if (e.name != "orbstack") continue;
        if (found) return nullptr;
        found = &e;
      }
      return found;
    };
    const Named *cluster = only(clusters), *context = only(contexts), *user = only(users);
    if (!cluster || !context || !user) {
      warnings.push_back("source kubeconfig " + r.source_path +
                         " has no complete orbstack cluster/context/user");
    } else {
      out_clusters.push_back(YAML::Clone(cluster->node));
      out_contexts.push_back(YAML::Clone(context->node));
      out_users.push_back(YAML::Clone(user->node));
      if (current.empty()) current = "orbstack";
    }
  }

  if (out_clusters.size() == 0) return result;
  YAML::Node doc(YAML::NodeType::Map);
  doc["apiVersion"] = str("v1");
  doc["kind"] = str("Config");
  doc["clusters"] = out_clusters;
  doc["contexts"] = out_contexts;
  doc["users"] = out_users;
  doc["current-context"] = str(current);
  YAML::Emitter e;
  e.SetIndent(2);
  emit(e, doc);
  if (!e.good()) {
    warnings.push_back("cannot write the session kubeconfig: " + e.GetLastError());
    return result;
  }
  result.yaml = std::string(e.c_str()) + "\n";
  return result;
}

std::string source_kubeconfig_path(const std::string& state_root) {
  if (const char* kc = std::getenv("KUBECONFIG"); kc && *kc) {
    for (const auto& entry : split(kc, ':')) {
      if (entry.empty()) continue;
      const std::string p = absolute_normal(entry, std::filesystem::current_path().string());
      // A session kubeconfig (e.g. exported to a harness shell) is never a source.
      if (path_within(resolve_existing_prefix(p), state_root) || path_within(p, state_root))
        continue;
      return p;
    }
  }
  return home_dir() + "/.kube/config";
}

std::string aws_config_path() {
  if (const char* p = std::getenv("AWS_CONFIG_FILE"); p && *p)
    return absolute_normal(p, std::filesystem::current_path().string());
  return home_dir() + "/.aws/config";
}

KubeconfigResult session_kubeconfig(const Profile& profile, const std::string& aws_cli,
                                    const std::string& state_root) {
  KubeconfigRequest r;
  r.eks = profile.kube_eks && profile.aws_profile.has_value();
  r.orbstack = profile.kube_orbstack;
  if (!r.eks && !r.orbstack) return {};
  r.aws_profile = profile.aws_profile.value_or("");
  if (!aws_cli.empty()) r.aws_command = aws_cli;
  r.source_path = source_kubeconfig_path(state_root);
  std::vector<std::string> read_warnings;
  const auto read = [&](const std::string& path) -> std::optional<std::string> {
    try {
      return read_file(path, kMaxSourceBytes);
    } catch (const Error& e) {
      read_warnings.push_back("cannot read " + path + ": " + e.message());
      return std::nullopt;
    }
  };
  r.source_text = read(r.source_path);
  if (r.eks) {
    r.aws_config_path = aws_config_path();
    r.aws_config_text = read(r.aws_config_path);
  }
  KubeconfigResult out = build_kubeconfig(r);
  out.warnings.insert(out.warnings.begin(), read_warnings.begin(), read_warnings.end());
  return out;
}

}  // namespace agent_boundary::credentials
