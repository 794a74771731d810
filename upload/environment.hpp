// What an upload says about where it comes from: the machine (os-release,
// uname, /proc/cpuinfo, /proc/meminfo), the git checkout (commit, branch,
// owner and repository from the remote) and the CI environment (GitHub
// Actions with its event payload, GitLab CI). Every source is read through
// an Environment value, so tests fake a CI job without touching the
// process's own variables; files are read with size caps and type checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/base.hpp"

namespace runner::upload {

// Environment variables, by name.
using Environment = std::map<std::string, std::string>;

// The variables of this process.
Environment current_environment();

// The value of `name`, std::nullopt when unset or empty.
std::optional<std::string> env_value(const Environment& env,
                                     const std::string& name);

struct MachineFacts {
  std::string os;          // os-release ID: "debian"
  std::string os_version;  // os-release VERSION_ID: "12"
  std::string arch;        // uname machine: "x86_64"
  std::string host;        // uname nodename
  std::string user;        // the effective user's name
  std::string cpu_brand;   // cpuinfo "model name"
  std::string cpu_name;    // "cpu0"-style name of the first CPU
  std::string cpu_vendor_id;
  uint32_t cpu_cores = 0;        // online CPUs
  uint64_t total_memory_gb = 0;  // MemTotal, rounded to GiB
  std::vector<std::string> cpu_flags;
};

MachineFacts collect_machine_facts();

enum class CiProvider { kLocal, kGitHubActions, kGitLabCi };

// The facts of the commit under test and of the job, from the CI
// environment when present, else from git in `checkout`.
struct RunFacts {
  CiProvider provider = CiProvider::kLocal;
  std::string commit;  // full SHA of the commit under test
  std::string ref;     // "refs/heads/main", "refs/pull/7/merge"
  std::string branch;  // the branch the run belongs to: "main", "feat/x"
  std::optional<std::string> head_ref;  // pull/merge request source branch
  std::optional<std::string> base_ref;  // pull/merge request target branch
  std::optional<std::string> base_commit;
  std::optional<uint64_t> pull_request;  // PR number / MR IID
  std::string owner;                     // "acme" (GitLab: the namespace path)
  std::string repository;                // "widgets"
  std::string event;                     // "push", "pull_request", "local"
  std::optional<std::string> sender;     // actor login
  std::string sender_id;                 // "" when unknown
  std::string run_id;           // GITHUB_RUN_ID / CI_PIPELINE_ID, "" locally
  std::string job;              // GITHUB_JOB / CI_JOB_NAME, "" locally
  std::string run_url;          // a link to the CI run, "" locally
  std::string repository_root;  // the checkout's root folder
  MachineFacts machine;
};

// The facts of a run of the checkout containing `checkout` (a folder).
// GitHub's pull_request payload ($GITHUB_EVENT_PATH, at most 16 MiB)
// gives the head commit and both refs; GitLab's CI_MERGE_REQUEST_*
// variables likewise. Without CI, git is asked (a missing git or a folder
// outside a checkout is an error naming what is missing).
base::Result<RunFacts> collect_run_facts(const std::string& checkout,
                                         const Environment& env);

// The branch a pull request merges into (GITHUB_BASE_REF,
// CI_MERGE_REQUEST_TARGET_BRANCH_NAME), else "main".
std::string default_base_branch(const Environment& env);

const char* provider_name(CiProvider provider);  // "GITHUB_ACTIONS", ...

}  // namespace runner::upload
