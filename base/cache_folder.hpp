// The runner's caches on disk (the finalize cache, the store's fetched
// runs): one folder each (cache_directory in fs.hpp), private to the user,
// holding entries (a file or a folder of files) that are removed least
// recently used first once they total more than a cap.
//
// Safety (the runner often runs as root): the folder is created 0700 and
// accepted only as a directory owned by the effective uid, not a symlink;
// group and other access is removed. Everything else works under the
// folder's fd and never follows a symlink.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace runner::base {

// Creates `dir` (0700; missing parents as make_directories) and opens it:
// an error names the folder when it is a symlink, not a directory or not
// owned by the effective uid. A folder of ours open to group or others is
// tightened to 0700.
Result<UniqueFd> open_cache_folder(const std::string& dir);

// One entry of a cache folder.
struct CacheEntry {
  std::string name;
  uint64_t bytes = 0;       // a folder: its regular files' bytes, nested
  struct timespec used {};  // its mtime: when it was written or last used
};

// The names in the folder open as dir_fd ("." and ".." left out).
std::vector<std::string> entry_names(int dir_fd);

// The bytes of the regular file `name` under dir_fd, or of the regular files
// in the folder `name` and its subfolders (symlinks are not followed, nor
// counted); 0 when it cannot be read.
uint64_t entry_bytes(int dir_fd, const std::string& name);

// Marks the entry `name` as used now (its mtime), so eviction keeps it
// longest.
void touch_cache_entry(int dir_fd, const std::string& name);

// Removes `name` under dir_fd, a folder with everything in it; symlinks are
// removed, never followed.
Status remove_entry(int dir_fd, const std::string& name);

// Removes the least recently used of `entries` (all in dir_fd) until the
// rest total at most max_bytes; the entry named `keep` (when not empty) is
// never removed, whatever its size. Returns the bytes kept.
uint64_t evict_least_recently_used(int dir_fd, std::vector<CacheEntry> entries,
                                   uint64_t max_bytes,
                                   std::string_view keep = {});

}  // namespace runner::base
