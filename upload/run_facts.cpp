// The facts of a run: from the CI environment (GitHub Actions, GitLab CI)
// or from git in the checkout (see environment.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <tuple>

#include "base/base.hpp"
#include "format/format.hpp"
#include "upload/environment.hpp"

namespace runner::upload {
namespace {

constexpr uint64_t kMaxEventPayload = 16u << 20;

std::string value_or(const Environment& env, const std::string& name,
                     const std::string& fallback = "") {
  return env_value(env, name).value_or(fallback);
}

// The stdout of `git -C checkout ARGS...`, trimmed; an error naming the
// command when git is missing or fails.
base::Result<std::string> git(const std::string& checkout,
                              const std::vector<std::string>& args,
                              const Environment& env) {
  auto path =
      base::find_executable("git", value_or(env, "PATH", "/usr/bin:/bin"));
  if (!path)
    return base::Error("git is needed outside CI: " + path.error().what());
  auto out = base::create_anonymous_temp_file("runner-git-");
  if (!out) return out.error();
  base::UniqueFd null_fd(::open("/dev/null", O_RDWR | O_CLOEXEC));
  base::SpawnOptions options;
  options.argv = {*path, "-C", checkout};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env.emplace();  // git sees the environment the facts come from
  for (const auto& [name, value] : env)
    options.env->push_back(name + "=" + value);
  options.stdin_fd = null_fd.get();
  options.stdout_fd = out->get();
  options.stderr_fd = null_fd.get();
  auto child = base::ChildProcess::spawn(options);
  if (!child) return child.error();
  auto status = child->wait();
  if (!status) return status.error();
  if (!status->success())
    return base::Error("git " + args.front() + " in " + checkout + " failed (" +
                       status->describe() + ")");
  auto text = base::read_file("/proc/self/fd/" + std::to_string(out->get()),
                              base::following_symlinks());
  if (!text) return text.error();
  std::string value = *text;
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r'))
    value.pop_back();
  return value;
}

// owner and repository of a remote URL: https://host/OWNER/REPO(.git),
// git@host:OWNER/REPO.git, ssh://git@host/OWNER/REPO.git (GitLab groups:
// OWNER is every segment but the last).
std::pair<std::string, std::string> owner_and_repository(std::string url) {
  if (url.size() > 4 && url.compare(url.size() - 4, 4, ".git") == 0)
    url.resize(url.size() - 4);
  while (!url.empty() && url.back() == '/') url.pop_back();
  size_t path_start = std::string::npos;
  if (const size_t scheme = url.find("://"); scheme != std::string::npos)
    path_start = url.find('/', scheme + 3);
  else if (const size_t colon = url.find(':'); colon != std::string::npos)
    path_start = colon;
  if (path_start == std::string::npos) return {"", ""};
  const std::string path = url.substr(path_start + 1);
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

base::Status git_facts(const std::string& checkout, const Environment& env,
                       RunFacts& facts) {
  auto commit = git(checkout, {"rev-parse", "HEAD"}, env);
  if (!commit)
    return base::Error(
        "cannot tell the commit under test: no CI environment "
        "(GitHub Actions, GitLab CI) and " +
        checkout + " is not in a git checkout (" + commit.error().what() +
        "); run it from the benchmarks' checkout");
  facts.commit = *commit;
  facts.branch = git(checkout, {"symbolic-ref", "--short", "-q", "HEAD"}, env)
                     .value_or("");
  if (facts.branch.empty()) facts.branch = "detached";
  facts.ref = "refs/heads/" + facts.branch;
  facts.repository_root =
      git(checkout, {"rev-parse", "--show-toplevel"}, env).value_or(checkout);
  auto remote = git(checkout, {"remote", "get-url", "origin"}, env);
  if (remote)
    std::tie(facts.owner, facts.repository) = owner_and_repository(*remote);
  if (facts.repository.empty()) {
    facts.owner = "local";
    facts.repository =
        facts.repository_root.substr(facts.repository_root.rfind('/') + 1);
  }
  facts.event = "local";
  return {};
}

void github_event_facts(const Environment& env, RunFacts& facts) {
  auto path = env_value(env, "GITHUB_EVENT_PATH");
  if (!path) return;
  base::ReadOptions options;
  options.max_size = kMaxEventPayload;
  auto text = base::read_file(*path, options);
  if (!text) {
    RUNNER_LOG("upload", kWarning)
        << "GitHub event payload: " << text.error().what();
    return;
  }
  auto event = format::read_github_event(*text);
  if (!event) {
    RUNNER_LOG("upload", kWarning) << *path << ": " << event.error().message();
    return;
  }
  if (event->sender_login) facts.sender = event->sender_login;
  if (event->sender_id) facts.sender_id = *event->sender_id;
  // Only a pull request's events make the run a pull request's (a push's
  // payload has no such members; one that had would not make it one).
  if (facts.event != "pull_request" && facts.event != "pull_request_target")
    return;
  if (event->head_sha) facts.commit = *event->head_sha;
  if (event->head_ref) facts.head_ref = event->head_ref;
  if (event->base_ref) facts.base_ref = event->base_ref;
  if (event->base_sha) facts.base_commit = event->base_sha;
  if (event->number) facts.pull_request = event->number;
}

void github_facts(const Environment& env, RunFacts& facts) {
  facts.provider = CiProvider::kGitHubActions;
  facts.commit = value_or(env, "GITHUB_SHA");
  facts.ref = value_or(env, "GITHUB_REF");
  facts.head_ref = env_value(env, "GITHUB_HEAD_REF");
  facts.base_ref = env_value(env, "GITHUB_BASE_REF");
  facts.branch = facts.head_ref.value_or(value_or(env, "GITHUB_REF_NAME"));
  const std::string repository = value_or(env, "GITHUB_REPOSITORY");
  const size_t slash = repository.find('/');
  facts.owner = repository.substr(0, slash);
  facts.repository =
      slash == std::string::npos ? "" : repository.substr(slash + 1);
  facts.event = value_or(env, "GITHUB_EVENT_NAME", "push");
  facts.sender = env_value(env, "GITHUB_ACTOR");
  facts.run_id = value_or(env, "GITHUB_RUN_ID");
  facts.job = value_or(env, "GITHUB_JOB");
  if (!facts.run_id.empty())
    facts.run_url = value_or(env, "GITHUB_SERVER_URL", "https://github.com") +
                    "/" + repository + "/actions/runs/" + facts.run_id;
  facts.repository_root = value_or(env, "GITHUB_WORKSPACE");
  github_event_facts(env, facts);
}

void gitlab_facts(const Environment& env, RunFacts& facts) {
  facts.provider = CiProvider::kGitLabCi;
  facts.commit = value_or(env, "CI_COMMIT_SHA");
  const auto iid = env_value(env, "CI_MERGE_REQUEST_IID");
  facts.head_ref = env_value(env, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME");
  facts.base_ref = env_value(env, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME");
  facts.base_commit = env_value(env, "CI_MERGE_REQUEST_DIFF_BASE_SHA");
  facts.branch = facts.head_ref.value_or(value_or(env, "CI_COMMIT_REF_NAME"));
  // A tag's pipeline names the tag in CI_COMMIT_REF_NAME: its ref is not a
  // branch's, whatever the tag is called.
  const auto tag = env_value(env, "CI_COMMIT_TAG");
  facts.ref = iid   ? "refs/merge-requests/" + *iid + "/head"
              : tag ? "refs/tags/" + *tag
                    : "refs/heads/" + facts.branch;
  if (iid) facts.pull_request = std::strtoull(iid->c_str(), nullptr, 10);
  facts.owner = value_or(env, "CI_PROJECT_NAMESPACE");
  facts.repository = value_or(env, "CI_PROJECT_NAME");
  const std::string source = value_or(env, "CI_PIPELINE_SOURCE", "push");
  facts.event = source == "merge_request_event" ? "pull_request" : source;
  facts.sender = env_value(env, "GITLAB_USER_LOGIN");
  facts.sender_id = value_or(env, "GITLAB_USER_ID");
  facts.run_id = value_or(env, "CI_PIPELINE_ID");
  facts.job = value_or(env, "CI_JOB_NAME");
  facts.run_url = value_or(env, "CI_PIPELINE_URL");
  facts.repository_root = value_or(env, "CI_PROJECT_DIR");
}

// What CI must have given; an error names the missing variables.
base::Status check_ci_facts(const RunFacts& facts) {
  std::string missing;
  const bool github = facts.provider == CiProvider::kGitHubActions;
  if (facts.commit.empty())
    missing += github ? " GITHUB_SHA" : " CI_COMMIT_SHA";
  if (facts.repository.empty())
    missing += github ? " GITHUB_REPOSITORY" : " CI_PROJECT_NAME";
  if (facts.branch.empty())
    missing += github ? " GITHUB_REF_NAME" : " CI_COMMIT_REF_NAME";
  if (missing.empty()) return {};
  return base::Error(std::string(provider_name(facts.provider)) + " without" +
                     missing);
}

}  // namespace

base::Result<RunFacts> collect_run_facts(const std::string& checkout,
                                         const Environment& env) {
  RunFacts facts;
  facts.machine = collect_machine_facts();
  if (env_value(env, "GITHUB_ACTIONS") == "true") {
    github_facts(env, facts);
  } else if (env_value(env, "GITLAB_CI") == "true") {
    gitlab_facts(env, facts);
  } else {
    if (auto s = git_facts(checkout, env, facts); !s) return s.error();
    return facts;
  }
  if (auto s = check_ci_facts(facts); !s) return s.error();
  if (facts.repository_root.empty()) facts.repository_root = checkout;
  return facts;
}

}  // namespace runner::upload
