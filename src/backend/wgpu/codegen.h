#pragma once
// WGSL assembly: the kernels live in kernels/<family>.wgsl (embedded at build time), one
// `//@kernel NAME` section per kernel. A kernel is specialised by text: a prelude declares
// its buffers (all as words, whatever the tensor dtype) with typed load/store functions,
// and `{{KEY}}` placeholders take op expressions. The pipeline cache keys on the result. A
// `//@use NAME` line in a kernel pastes the family's `//@part NAME` section there (shared
// module-scope helpers, since WGSL has no includes).
#include <string>
#include <utility>
#include <vector>

#include "backend/wgpu/context.h"
#include "spiraltorch/tensor.h"

namespace st::backend::wgpu {

// One buffer binding, named in WGSL as ldf_NAME/ldi_NAME(i) (load element i as f32 / i32)
// and stf_NAME/sti_NAME(i, v) (store, converting to the dtype); i counts elements of dtype.
struct Arg {
  std::string name;
  Dtype dtype;
  bool write = false;
};

using Subs = std::vector<std::pair<std::string, std::string>>;

// The full module text for `family`'s `kernel` over these buffers.
std::string wgsl(const std::string& family, const std::string& kernel, const std::vector<Arg>& args,
                 const Subs& subs = {});
// Whether the dtype computes in f32 (floating) or i32 (integers and bool) inside kernels.
bool is_float_domain(Dtype d);
// "f32" or "i32".
const char* domain(Dtype d);
// Throws DtypeError for dtypes WGSL cannot hold (float64, complex).
void check_dtype(const char* op, Dtype d);

// The buffer of a tensor (or raw address) and its element offset for kernels.
BufferRef ref(const Tensor& t);
int32_t elem_offset(const Tensor& t);      // offset in elements of t's dtype from the buffer's start
int32_t i32(int64_t v, const char* what);  // range-checked narrowing for parameter words
int32_t fbits(double v);                   // float parameter as its f32 bit pattern

// The pipeline of `family`'s `kernel` for these buffers and substitutions, compiled once and then
// found by a short key (not the module text). `nbuffers`: the storage bindings when the kernel
// declares its own (args empty), else args.size().
WGPUComputePipeline pipeline_for(const std::string& family, const std::string& kernel, const std::vector<Arg>& args,
                                 const Subs& subs = {}, int nbuffers = -1);
// Compiles (or takes from the cache) and runs a kernel.
void run(const std::string& family, const std::string& kernel, const std::vector<Arg>& args,
         const std::vector<BufferRef>& buffers, const std::vector<int32_t>& params, int64_t threads,
         const Subs& subs = {}, int64_t wg = 256);

// The embedded source of kernels/<family>.wgsl (generated: wgsl_sources.cpp).
const char* kernel_file(const std::string& family);

}  // namespace st::backend::wgpu
