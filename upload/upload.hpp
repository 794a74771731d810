// upload: what leaves the machine. A profile folder goes to a
// CodSpeed-compatible upload service (codspeed.hpp) or to the shared
// S3-compatible store (store.hpp), from which `runner compare --store`
// fetches a base. Facts about the machine, the checkout and the CI job come
// from environment.hpp; HTTP (libcurl), digests (libcrypto) and tar
// (libarchive) are each wrapped in one file. The caller owns the folder;
// archives are anonymous temporary files, gone when the upload ends.
#pragma once

#include "upload/archive.hpp"
#include "upload/codspeed.hpp"
#include "upload/digest.hpp"
#include "upload/environment.hpp"
#include "upload/http.hpp"
#include "upload/s3.hpp"
#include "upload/store.hpp"
