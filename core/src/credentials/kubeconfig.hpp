// The session kubeconfig: just the clusters a profile asks for, generated at session
// creation (write_session) into `<session>/kubeconfig` (0600), readable inside the
// boundary while the user's own kubeconfig stays denied.
//
// Source: the first file of $KUBECONFIG (entries inside agent-boundary's state root, i.e.
// a session kubeconfig, are skipped), else ~/.kube/config.
//   kube.eks: the account of `aws.profile` (from $AWS_CONFIG_FILE or ~/.aws/config,
//     following role_arn, sso_account_id, sso_session and source_profile chains); the ONE
//     cluster of that account named arn:<partition>:eks:<region>:<account>:cluster/<name>
//     is copied, with context `agent-boundary-<name>` and user `agent-boundary-aws`, whose
//     exec runs the pinned `aws --region R eks get-token --cluster-name N --output json`
//     (no --profile: it uses the injected environment credentials).
//   kube.orbstack: the cluster, context and user named `orbstack` are copied.
// Each kind is independent; every problem (missing or malformed source, no account, 0 or
// several clusters) is a warning, never a failed session. Purely local: no API calls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profile.hpp"

namespace agent_boundary::credentials {

inline constexpr const char* kKubeconfigFile = "kubeconfig";
inline constexpr const char* kEksUser = "agent-boundary-aws";

struct KubeconfigRequest {
  bool eks = false;
  bool orbstack = false;
  std::string aws_profile;
  std::string aws_command = "aws";  // the pinned AWS CLI
  std::string source_path;
  std::optional<std::string> source_text;  // nullopt: the source does not exist
  std::string aws_config_path;
  std::optional<std::string> aws_config_text;
};

struct KubeconfigResult {
  std::optional<std::string> yaml;  // nullopt: nothing selected (no file)
  std::vector<std::string> warnings;
};

// Pure: no file access (tested with fixtures).
KubeconfigResult build_kubeconfig(const KubeconfigRequest& request);

// The 12-digit account of `profile` in an AWS config file's text, or nullopt.
std::optional<std::string> aws_account_id(const std::string& config_text,
                                          const std::string& profile);

// $KUBECONFIG's first usable entry (not inside `state_root`), else ~/.kube/config.
std::string source_kubeconfig_path(const std::string& state_root);
// $AWS_CONFIG_FILE, else ~/.aws/config.
std::string aws_config_path();

// Read the sources and build the kubeconfig `profile` asks for (nullopt yaml when it asks
// for none).
KubeconfigResult session_kubeconfig(const Profile& profile, const std::string& aws_cli,
                                    const std::string& state_root);

}  // namespace agent_boundary::credentials
