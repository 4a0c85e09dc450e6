#pragma once
// ST_HOST_DEVICE marks a function that host code and CUDA device code share (empty outside nvcc),
// so both compute a value by the same lines.
#ifdef __CUDACC__
#define ST_HOST_DEVICE __host__ __device__
#else
#define ST_HOST_DEVICE
#endif
