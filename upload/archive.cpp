// libarchive, wrapped here and nowhere else (see archive.hpp).
#include "upload/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "base/base.hpp"

namespace runner::upload {
namespace {

constexpr size_t kChunk = 1 << 20;

using Archive = std::unique_ptr<archive, int (*)(archive*)>;
using Entry = std::unique_ptr<archive_entry, void (*)(archive_entry*)>;

std::string archive_reason(archive* a) {
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "unknown libarchive error";
}

// One file or folder to pack: its path relative to the folder.
struct Item {
  std::string path;
  bool directory = false;
};

// Every regular file and folder under dir_fd, sorted by path, folders
// before what they hold; the rest is logged and skipped.
base::Status list_folder(int dir_fd, const std::string& prefix,
                         std::vector<Item>& out) {
  const int fd = ::dup(dir_fd);
  if (fd < 0) return base::errno_error("cannot list " + prefix);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return base::errno_error("cannot list " + prefix);
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    struct stat st {};
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return base::errno_error("cannot inspect " + path);
    if (S_ISREG(st.st_mode)) {
      out.push_back({path, false});
    } else if (S_ISDIR(st.st_mode)) {
      out.push_back({path, true});
      base::UniqueFd sub(
          ::openat(dir_fd, name.c_str(),
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) return base::errno_error("cannot open folder " + path);
      if (auto s = list_folder(sub.get(), path, out); !s) return s;
    } else {
      RUNNER_LOG("upload", kWarning)
          << "not archived (not a regular file or folder): " << path;
    }
  }
  return {};
}

base::Status write_file_data(archive* a, int fd, uint64_t size,
                             const std::string& path) {
  std::vector<char> buffer(kChunk);
  uint64_t done = 0;
  while (done < size) {
    const ssize_t got = ::read(fd, buffer.data(),
                               std::min<uint64_t>(buffer.size(), size - done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return base::errno_error("cannot read " + path);
    if (got == 0) return base::Error(path + " shrank while it was archived");
    if (archive_write_data(a, buffer.data(), static_cast<size_t>(got)) < 0)
      return base::Error("cannot write the archive: " + archive_reason(a),
                         archive_errno(a));
    done += static_cast<uint64_t>(got);
  }
  return {};
}

// Writes one entry (header and, for a file, its bytes).
base::Status pack_item(archive* a, int root_fd, const Item& item,
                       PackedArchive& out) {
  base::UniqueFd fd(::openat(
      root_fd, item.path.c_str(),
      O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (item.directory ? O_DIRECTORY : 0)));
  if (!fd) return base::errno_error("cannot open " + item.path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return base::errno_error("cannot inspect " + item.path);
  if (S_ISREG(st.st_mode) == item.directory)
    return base::Error(item.path + " changed type while it was archived");
  Entry entry(archive_entry_new(), &archive_entry_free);
  archive_entry_set_pathname(entry.get(), ("./" + item.path).c_str());
  archive_entry_set_filetype(entry.get(), item.directory ? AE_IFDIR : AE_IFREG);
  archive_entry_set_perm(entry.get(), st.st_mode & 0777);
  archive_entry_set_mtime(entry.get(), st.st_mtim.tv_sec, 0);
  archive_entry_set_size(entry.get(), item.directory ? 0 : st.st_size);
  if (archive_write_header(a, entry.get()) != ARCHIVE_OK)
    return base::Error("cannot write the archive: " + archive_reason(a),
                       archive_errno(a));
  ++out.entries;
  if (item.directory) return {};
  out.folder_bytes += static_cast<uint64_t>(st.st_size);
  return write_file_data(a, fd.get(), static_cast<uint64_t>(st.st_size),
                         item.path);
}

Archive new_writer(ArchiveCompression compression, int fd) {
  Archive a(archive_write_new(), &archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  if (compression == ArchiveCompression::kZstd) {
    archive_write_add_filter_zstd(a.get());
    archive_write_set_filter_option(a.get(), "zstd", "compression-level", "9");
  }
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open_fd(a.get(), fd) != ARCHIVE_OK) a.reset();
  return a;
}

}  // namespace

base::Result<PackedArchive> pack_folder(const std::string& folder,
                                        ArchiveCompression compression) {
  base::UniqueFd root(
      ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return base::errno_error("cannot open the folder " + folder);
  std::vector<Item> items;
  if (auto listed = list_folder(root.get(), "", items); !listed)
    return listed.error();
  auto temp = base::create_anonymous_temp_file("runner-archive-");
  if (!temp) return temp.error();
  PackedArchive out;
  out.fd = std::move(*temp);
  Archive a = new_writer(compression, out.fd.get());
  if (!a) return base::Error("cannot start the archive of " + folder);
  for (const Item& item : items)
    if (auto packed = pack_item(a.get(), root.get(), item, out); !packed)
      return packed.error();
  if (archive_write_close(a.get()) != ARCHIVE_OK)
    return base::Error("cannot write the archive: " + archive_reason(a.get()),
                       archive_errno(a.get()));
  const off_t size = ::lseek(out.fd.get(), 0, SEEK_END);
  if (size < 0 || ::lseek(out.fd.get(), 0, SEEK_SET) != 0)
    return base::errno_error("cannot measure the archive");
  out.size = static_cast<uint64_t>(size);
  return out;
}

UploadCost upload_cost(const PackedArchive& archive, uint64_t start_ns) {
  return {archive.folder_bytes, archive.size,
          static_cast<double>(base::monotonic_ns() - start_ns) / 1e9};
}

namespace {

// The components of an entry's name ("./a/b" → {"a", "b"}), or an error
// for an absolute name, a ".." component or an empty one.
base::Result<std::vector<std::string>> safe_components(
    const std::string& name) {
  if (name.empty() || name[0] == '/')
    return base::Error("refused archive entry '" + name + "': absolute name");
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t slash = std::min(name.find('/', start), name.size());
    const std::string part = name.substr(start, slash - start);
    if (part == "..")
      return base::Error("refused archive entry '" + name + "': '..' in it");
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  if (parts.empty())
    return base::Error("refused archive entry '" + name + "': no name");
  return parts;
}

// The folder holding the last component, created as needed, never through
// a symlink.
base::Result<base::UniqueFd> open_parent(
    int root_fd, const std::vector<std::string>& parts) {
  base::UniqueFd dir(::dup(root_fd));
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (::mkdirat(dir.get(), parts[i].c_str(), 0700) != 0 && errno != EEXIST)
      return base::errno_error("cannot create folder " + parts[i]);
    base::UniqueFd next(
        ::openat(dir.get(), parts[i].c_str(),
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return base::errno_error("cannot open folder " + parts[i]);
    dir = std::move(next);
  }
  return dir;
}

// The most the files may total: the cap, and the ratio to the archive's
// size when the archive is a regular file.
struct ByteBudget {
  uint64_t bytes = 0;
  std::string why;  // what the budget is, for the error
};

ByteBudget byte_budget(int archive_fd, const UnpackLimits& limits) {
  ByteBudget budget{limits.max_total_bytes,
                    "more than " + std::to_string(limits.max_total_bytes) +
                        " bytes unpacked"};
  struct stat st {};
  if (limits.max_ratio == 0 || ::fstat(archive_fd, &st) != 0 ||
      !S_ISREG(st.st_mode))
    return budget;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t by_ratio =
      size > budget.bytes / limits.max_ratio
          ? budget.bytes
          : std::max(size * limits.max_ratio, limits.ratio_floor);
  if (by_ratio < budget.bytes)
    budget = {by_ratio, "an archive of " + std::to_string(size) +
                            " bytes unpacking to more than " +
                            std::to_string(by_ratio) + " bytes (" +
                            std::to_string(limits.max_ratio) +
                            " times its size)"};
  return budget;
}

struct Unpacker {
  archive* a;
  int root_fd;
  ByteBudget budget;
  UnpackStats stats;

  base::Status file(const std::string& name, int parent,
                    const std::string& leaf, mode_t mode) {
    base::UniqueFd fd(
        ::openat(parent, leaf.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 (mode & 0755) | 0600));
    if (!fd) return base::errno_error("cannot create " + name);
    std::vector<char> buffer(kChunk);
    for (;;) {
      const la_ssize_t got = archive_read_data(a, buffer.data(), buffer.size());
      if (got < 0)
        return base::Error("corrupt archive at '" + name +
                           "': " + archive_reason(a));
      if (got == 0) break;
      stats.bytes += static_cast<uint64_t>(got);
      if (stats.bytes > budget.bytes)
        return base::Error("refused " + budget.why + ", at '" + name + "'",
                           EFBIG);
      if (auto w = base::write_all(fd.get(), {buffer.data(), size_t(got)}); !w)
        return base::Error("cannot write " + name + ": " + w.error().what());
    }
    ++stats.files;
    return {};
  }

  base::Status entry(archive_entry* e) {
    const char* raw = archive_entry_pathname(e);
    const std::string name = raw != nullptr ? raw : "";
    auto parts = safe_components(name);
    if (!parts) return parts.error();
    if (archive_entry_hardlink(e) != nullptr)
      return base::Error("refused archive entry '" + name + "': a hard link");
    const mode_t type = archive_entry_filetype(e);
    if (type != AE_IFREG && type != AE_IFDIR)
      return base::Error("refused archive entry '" + name +
                         "': not a regular file or folder");
    auto parent = open_parent(root_fd, *parts);
    if (!parent) return parent.error();
    if (type == AE_IFDIR) {
      if (::mkdirat(parent->get(), parts->back().c_str(), 0700) != 0 &&
          errno != EEXIST)
        return base::errno_error("cannot create folder " + name);
      return {};
    }
    return file(name, parent->get(), parts->back(), archive_entry_perm(e));
  }
};

}  // namespace

base::Result<UnpackStats> unpack_archive(int archive_fd,
                                         const std::string& destination,
                                         const UnpackLimits& limits) {
  base::UniqueFd root(::open(destination.c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return base::errno_error("cannot open " + destination);
  Archive a(archive_read_new(), &archive_read_free);
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_none(a.get());
  if (archive_read_open_fd(a.get(), archive_fd, kChunk) != ARCHIVE_OK)
    return base::Error("not a tar archive: " + archive_reason(a.get()));
  Unpacker unpacker{a.get(), root.get(), byte_budget(archive_fd, limits), {}};
  uint64_t entries = 0;
  for (;;) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      return base::Error("corrupt archive: " + archive_reason(a.get()));
    if (++entries > limits.max_entries)
      return base::Error("refused an archive of more than " +
                             std::to_string(limits.max_entries) +
                             " files and folders",
                         EFBIG);
    if (auto s = unpacker.entry(e); !s) return s.error();
  }
  return unpacker.stats;
}

}  // namespace runner::upload
