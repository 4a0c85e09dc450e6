#pragma once
// The backends behind st::distributed (internal). Each backend's file defines these in every
// build; without its engine they report why and make_*_group raises DeviceUnavailableError.
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/runtime/distributed.h"

namespace st::distributed::detail {

// "" when the backend is compiled in, else why not.
std::string mpi_unavailable_reason();
std::string nccl_unavailable_reason();
// The MPI library's own version line ("Open MPI v5.0.11, ..."), "" without MPI.
std::string mpi_library_version();

std::unique_ptr<ProcessGroup> make_mpi_group(const GroupOptions& options);
std::unique_ptr<ProcessGroup> make_nccl_group(const GroupOptions& options);

// NCCL's rendezvous over MPI (when compiled in): initialises MPI if needed and broadcasts
// `bytes` from rank 0 of MPI_COMM_WORLD; returns MPI's (rank, size).
std::pair<int, int> mpi_broadcast_bytes(std::vector<char>& bytes);

// An integer from the environment, or -1 when unset; raises when set but not an integer.
int env_int(const char* name);

}  // namespace st::distributed::detail
