// What the readers of the store's records share (store.cpp,
// store_history.cpp); not part of the façade.
#pragma once

#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "upload/store.hpp"

namespace runner::upload {

// The prefix of the records of pushes to `branch`.
std::string refs_prefix(const S3Location& location, const RunFacts& facts,
                        const std::string& branch);

// No answer from the store at all (as opposed to an answer about one
// object): the next record would fare no better.
bool store_unreachable(const base::Error& error);

// The keys of the records directly under `prefix`, newest first.
std::vector<std::string> record_keys(
    const std::vector<format::S3Object>& objects, const std::string& prefix);

// The run whose record is `text` read from `key`, when it is a base for
// `branch`; else an error saying why.
base::Result<StoredRun> parse_base_run(const std::string& text,
                                       const S3Location& location,
                                       const RunFacts& facts,
                                       const std::string& branch,
                                       const std::string& key);

// The same for the record GET from the store at `key` (the error of the
// GET when there was one).
base::Result<StoredRun> read_base_run(S3Client& client,
                                      const S3Location& location,
                                      const RunFacts& facts,
                                      const std::string& branch,
                                      const std::string& key);

}  // namespace runner::upload
