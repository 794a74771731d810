// A faked GitHub Actions job of acme/widgets for the upload, store and
// action tests: a push to main (commit a…a) or pull request 7 from feat/x
// into main (head commit b…b), as "K=V" environment entries.
#pragma once

#include <string>
#include <vector>

namespace runner::testing {

inline std::vector<std::string> github_job_env(bool pull_request,
                                               const std::string& event_path) {
  const bool pr = pull_request;
  return {"GITHUB_ACTIONS=true",
          "GITLAB_CI=",
          "GITHUB_REPOSITORY=acme/widgets",
          "GITHUB_SHA=" + std::string(40, pr ? 'b' : 'a'),
          std::string("GITHUB_REF=") +
              (pr ? "refs/pull/7/merge" : "refs/heads/main"),
          std::string("GITHUB_REF_NAME=") + (pr ? "7/merge" : "main"),
          std::string("GITHUB_EVENT_NAME=") + (pr ? "pull_request" : "push"),
          std::string("GITHUB_HEAD_REF=") + (pr ? "feat/x" : ""),
          std::string("GITHUB_BASE_REF=") + (pr ? "main" : ""),
          "GITHUB_EVENT_PATH=" + event_path,
          "GITHUB_RUN_ID=99"};
}

}  // namespace runner::testing
