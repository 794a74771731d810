// base: low-level types every part may use.
//  - Result<T>/Error: value or errno + context chain (no exceptions for
//    expected failures).
//  - UniqueFd, MappedRegion: move-only RAII owners of fds and mappings.
//  - RUNNER_LOG(category, level): leveled logging, configured by RUNNER_LOG;
//    LogLimiter caps a message that outside input can repeat without bound.
//  - ChildProcess: spawn (optionally suspended), signal, wait; owns the pid
//    until it is reaped.
//  - MountNamespace: a mount namespace with bind mounts, for a child to join
//    (SpawnOptions::mount_namespace_fd).
//  - process tree: subreaper, reaping and killing what a benchmark left.
//  - monotonic_ns: CLOCK_MONOTONIC in nanoseconds.
//  - cpu_time_ns: the process's or the calling thread's CPU time (getrusage).
//  - fs helpers: write a file atomically (temp name + rename).
//  - cache folders: private (0700, ours, not a symlink), evicted least
//    recently used first to a size cap.
//  - hex: bytes and numbers as hex digits (to_hex, hex_number, append_hex
//    for escapes), the one hex encoder of the project.
//  - text helpers: take_item walks a separated list ("a,b,c"); the strict
//    UTF-8 decoder; printable_text makes outside text safe to print
//    (controls, bidi controls and invalid UTF-8 escaped).
#pragma once

#include "base/cache_folder.hpp"
#include "base/child_process.hpp"
#include "base/clock.hpp"
#include "base/fs.hpp"
#include "base/hex.hpp"
#include "base/log.hpp"
#include "base/log_limiter.hpp"
#include "base/mapped_region.hpp"
#include "base/mount_namespace.hpp"
#include "base/process_tree.hpp"
#include "base/ranges.hpp"
#include "base/result.hpp"
#include "base/status_line.hpp"
#include "base/text.hpp"
#include "base/unique_fd.hpp"
