// fifo: the runner FIFO protocol (CodSpeed-compatible), runner side.
//  - command.hpp: the Command variant (variant index == wire tag), markers.
//  - codec.hpp: bincode 1.x payload encoding/decoding and framing.
//  - frame_decoder.hpp: incremental frame splitting with an oversize guard.
//  - server.hpp: Server owns the lock file and both FIFOs (created at create(),
//    removed at close()), answers every command on the io_context thread and
//    accumulates RunData, which the agent takes once the benchmark is done.
//  - isolated_fifos.hpp: the FIFOs in a private directory, bound over the
//    fixed paths in the benchmark's own mount namespace (parallel runners).
// Depends on base and Boost.Asio only.
#pragma once

#include "fifo/codec.hpp"
#include "fifo/command.hpp"
#include "fifo/frame_decoder.hpp"
#include "fifo/isolated_fifos.hpp"
#include "fifo/server.hpp"
#include "fifo/server_options.hpp"
