// The members of a GitHub Actions event payload ($GITHUB_EVENT_PATH) that
// an upload needs: a pull_request's head and base, its number, the sender.
// Read here only; unknown members are ignored, a member of the wrong type
// is taken as absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/base.hpp"

namespace runner::format {

struct GitHubEvent {
  std::optional<uint64_t> number;       // pull_request.number
  std::optional<std::string> head_sha;  // pull_request.head.sha
  std::optional<std::string> head_ref;  // pull_request.head.ref
  std::optional<std::string> base_sha;  // pull_request.base.sha
  std::optional<std::string> base_ref;  // pull_request.base.ref
  std::optional<std::string> sender_login;
  std::optional<std::string> sender_id;  // written as text
};

// An error only when the text is not a JSON object.
base::Result<GitHubEvent> read_github_event(std::string_view text);

}  // namespace runner::format
