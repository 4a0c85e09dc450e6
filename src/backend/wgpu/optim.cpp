// Fused optimizer updates of the wgpu backend (kernels/optim.wgsl): the slots of a step go in as
// few dispatches as the adapter's storage-buffer limit allows (at most 16 slots each).
#include <algorithm>

#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {

void check_float32(const char* op, const Tensor& p) {
  if (p.dtype() != Dtype::Float32) {
    throw DtypeError(std::string("wgpu.") + op + ": fused update supports float32, got " + dtype_name(p.dtype()));
  }
}

// How many slots of `per_slot` buffers one dispatch may bind beside P and `shared` others. One on
// a CPU adapter: lavapipe runs every branch of the slot chain under a lane mask (about 8x the
// single-slot time for six slots), where a GPU's warps take only their own slot's branch.
size_t slots_per_dispatch(size_t per_slot, size_t shared = 0) {
  const Context& c = Context::require("optimizer");
  if (c.cpu_adapter()) return 1;
  const uint64_t lim = c.info().max_storage_buffers_per_shader_stage;
  return std::clamp<size_t>(lim > 1 + shared ? static_cast<size_t>((lim - 1 - shared) / per_slot) : 1, 1, 16);
}

// Runs `kernel` over groups of slots. For each slot `fill(slot, s, args, buffers, params, body)`
// appends its bindings, its offsets after (start, n) and its WGSL branch (s: its index in the
// dispatch, base: where its P words start); head: the P words before the slots. With `skip` (a
// device int32, see Backend::AdamArgs) the flag takes the first binding and a word after the
// head, and every invocation returns at once when it is nonzero.
template <typename Slot, typename Fill>
void multi(const char* kernel, std::span<const Slot> slots, size_t per_slot, const std::vector<int32_t>& head,
           const int32_t* skip, Fill fill) {
  const size_t G = slots_per_dispatch(per_slot, skip ? 1 : 0);
  BufferRef skip_ref{};
  int32_t skip_at = 0;
  if (skip) {
    skip_ref = Context::require("optimizer").resolve(skip);
    skip_at = i32(static_cast<int64_t>(skip_ref.offset / 4), "flag offset");
  }
  for (size_t s0 = 0; s0 < slots.size(); s0 += G) {
    std::vector<Arg> args;
    std::vector<BufferRef> buffers;
    std::vector<int32_t> params = head;
    std::string body;
    Subs subs;
    if (skip) {
      args.push_back({"skip", Dtype::Int32});
      buffers.push_back(skip_ref);
      subs.emplace_back("SKIP", "if (ldi_skip(P[" + std::to_string(params.size()) + "]) != 0) { return; }");
      params.push_back(skip_at);
    } else {
      subs.emplace_back("SKIP", "");
    }
    int64_t start = 0;
    int s = 0;
    for (size_t j = s0; j < std::min(slots.size(), s0 + G); ++j) {
      const int64_t n = fill.numel(slots[j]);
      if (n == 0) continue;
      const size_t base = params.size();
      params.push_back(i32(start, "optimizer elements"));
      params.push_back(i32(n, "numel"));
      fill(slots[j], s, base, args, buffers, params, body);
      start += n;
      ++s;
    }
    if (start == 0) continue;
    params[0] = i32(start, "optimizer elements");
    subs.emplace_back("SLOTS", body);
    run("optim", kernel, args, buffers, params, start, subs);
  }
}

std::string P(size_t k) { return "P[" + std::to_string(k) + "]"; }

struct AdamFill {
  bool amsgrad;
  int64_t numel(const backend::Backend::AdamSlot& sl) const { return sl.param.numel(); }
  void operator()(const backend::Backend::AdamSlot& sl, int s, size_t b, std::vector<Arg>& args,
                  std::vector<BufferRef>& buffers, std::vector<int32_t>& params, std::string& body) const {
    check_float32("adam", sl.param);
    const Tensor& vm = amsgrad ? sl.vmax : sl.v;
    const std::string k = std::to_string(s);
    args.insert(args.end(), {{"p" + k, sl.param.dtype(), true},
                             {"g" + k, sl.grad.dtype()},
                             {"m" + k, sl.m.dtype(), true},
                             {"v" + k, sl.v.dtype(), true},
                             {"x" + k, vm.dtype(), true}});
    buffers.insert(buffers.end(), {ref(sl.param), ref(sl.grad), ref(sl.m), ref(sl.v), ref(vm)});
    params.insert(params.end(),
                  {elem_offset(sl.param), elem_offset(sl.grad), elem_offset(sl.m), elem_offset(sl.v), elem_offset(vm)});
    auto at = [&](size_t w) { return P(b + w) + " + i"; };
    body += "  if (t < " + P(b) + " + " + P(b + 1) + ") {\n    let i = t - " + P(b) + ";\n    let r = adam1(ldf_p" + k +
            "(" + at(2) + "), ldf_g" + k + "(" + at(3) + "), ldf_m" + k + "(" + at(4) + "), ldf_v" + k + "(" + at(5) +
            "), ldf_x" + k + "(" + at(6) + "));\n    stf_p" + k + "(" + at(2) + ", r.p);\n    stf_m" + k + "(" + at(4) +
            ", r.m);\n    stf_v" + k + "(" + at(5) + ", r.v);\n    if ((P[1] & 1) != 0) { stf_x" + k + "(" + at(6) +
            ", r.vm); }\n    return;\n  }\n";
  }
};

struct SgdFill {
  int64_t numel(const backend::Backend::SgdSlot& sl) const { return sl.param.numel(); }
  void operator()(const backend::Backend::SgdSlot& sl, int s, size_t b, std::vector<Arg>& args,
                  std::vector<BufferRef>& buffers, std::vector<int32_t>& params, std::string& body) const {
    check_float32("sgd", sl.param);
    const bool has = sl.buf.defined();
    const Tensor& bt = has ? sl.buf : sl.param;
    const std::string k = std::to_string(s);
    args.insert(args.end(),
                {{"p" + k, sl.param.dtype(), true}, {"g" + k, sl.grad.dtype()}, {"b" + k, bt.dtype(), true}});
    buffers.insert(buffers.end(), {ref(sl.param), ref(sl.grad), ref(bt)});
    params.insert(params.end(), {elem_offset(sl.param), elem_offset(sl.grad), elem_offset(bt)});
    auto at = [&](size_t w) { return P(b + w) + " + i"; };
    body += "  if (t < " + P(b) + " + " + P(b + 1) + ") {\n    let i = t - " + P(b) + ";\n    let r = sgd1(ldf_p" + k +
            "(" + at(2) + "), ldf_g" + k + "(" + at(3) + "), ldf_b" + k + "(" + at(4) + "), " +
            (has ? "true" : "false") + ");\n" + (has ? "    stf_b" + k + "(" + at(4) + ", r.b);\n" : std::string()) +
            "    stf_p" + k + "(" + at(2) + ", r.p);\n    return;\n  }\n";
  }
};

struct AdagradFill {
  int64_t numel(const backend::Backend::AdagradSlot& sl) const { return sl.param.numel(); }
  void operator()(const backend::Backend::AdagradSlot& sl, int s, size_t b, std::vector<Arg>& args,
                  std::vector<BufferRef>& buffers, std::vector<int32_t>& params, std::string& body) const {
    check_float32("adagrad", sl.param);
    const std::string k = std::to_string(s);
    args.insert(args.end(),
                {{"p" + k, sl.param.dtype(), true}, {"g" + k, sl.grad.dtype()}, {"s" + k, sl.sum.dtype(), true}});
    buffers.insert(buffers.end(), {ref(sl.param), ref(sl.grad), ref(sl.sum)});
    params.insert(params.end(), {elem_offset(sl.param), elem_offset(sl.grad), elem_offset(sl.sum)});
    auto at = [&](size_t w) { return P(b + w) + " + i"; };
    body += "  if (t < " + P(b) + " + " + P(b + 1) + ") {\n    let i = t - " + P(b) + ";\n    let r = adagrad1(ldf_p" +
            k + "(" + at(2) + "), ldf_g" + k + "(" + at(3) + "), ldf_s" + k + "(" + at(4) + "));\n    stf_s" + k + "(" +
            at(4) + ", r.s);\n    stf_p" + k + "(" + at(2) + ", r.p);\n    return;\n  }\n";
  }
};

struct RmspropFill {
  int64_t numel(const backend::Backend::RmspropSlot& sl) const { return sl.param.numel(); }
  void operator()(const backend::Backend::RmspropSlot& sl, int s, size_t b, std::vector<Arg>& args,
                  std::vector<BufferRef>& buffers, std::vector<int32_t>& params, std::string& body) const {
    check_float32("rmsprop", sl.param);
    const bool centered = sl.grad_avg.defined(), has = sl.buf.defined();
    const Tensor& ga = centered ? sl.grad_avg : sl.param;
    const Tensor& bt = has ? sl.buf : sl.param;
    const std::string k = std::to_string(s);
    args.insert(args.end(), {{"p" + k, sl.param.dtype(), true},
                             {"g" + k, sl.grad.dtype()},
                             {"q" + k, sl.square_avg.dtype(), true},
                             {"a" + k, ga.dtype(), true},
                             {"b" + k, bt.dtype(), true}});
    buffers.insert(buffers.end(), {ref(sl.param), ref(sl.grad), ref(sl.square_avg), ref(ga), ref(bt)});
    params.insert(params.end(), {elem_offset(sl.param), elem_offset(sl.grad), elem_offset(sl.square_avg),
                                 elem_offset(ga), elem_offset(bt)});
    auto at = [&](size_t w) { return P(b + w) + " + i"; };
    body += "  if (t < " + P(b) + " + " + P(b + 1) + ") {\n    let i = t - " + P(b) + ";\n    let r = rmsprop1(ldf_p" +
            k + "(" + at(2) + "), ldf_g" + k + "(" + at(3) + "), ldf_q" + k + "(" + at(4) + "), ldf_a" + k + "(" +
            at(5) + "), ldf_b" + k + "(" + at(6) + "), " + (centered ? "true" : "false") + ", " +
            (has ? "true" : "false") + ");\n    stf_q" + k + "(" + at(4) + ", r.sq);\n" +
            (centered ? "    stf_a" + k + "(" + at(5) + ", r.ga);\n" : std::string()) +
            (has ? "    stf_b" + k + "(" + at(6) + ", r.b);\n" : std::string()) + "    stf_p" + k + "(" + at(2) +
            ", r.p);\n    return;\n  }\n";
  }
};

struct FlagFill {
  int64_t numel(const Tensor& x) const { return x.numel(); }
  void operator()(const Tensor& x, int s, size_t b, std::vector<Arg>& args, std::vector<BufferRef>& buffers,
                  std::vector<int32_t>& params, std::string& body) const {
    check_dtype("flag_nonfinite", x.dtype());
    const std::string k = std::to_string(s);
    args.push_back({"x" + k, x.dtype()});
    buffers.push_back(ref(x));
    params.push_back(elem_offset(x));
    body += "  " + std::string(s == 0 ? "" : "else ") + "if (t < " + P(b) + " + " + P(b + 1) + ") { v = ldf_x" + k +
            "(" + P(b + 2) + " + t - " + P(b) + "); }\n";
  }
};

}  // namespace

void adam_update(std::span<const backend::Backend::AdamSlot> slots, const backend::Backend::AdamArgs& a) {
  const int32_t flags =
      (a.amsgrad ? 1 : 0) | (a.maximize ? 2 : 0) | (a.decoupled ? 4 : 0) | (a.weight_decay != 0.0 ? 8 : 0);
  multi("adam", slots, 5,
        {0, flags, fbits(1.0 - a.beta1), fbits(a.beta2), fbits(1.0 - a.beta2), fbits(a.weight_decay), fbits(a.decay),
         fbits(a.eps), fbits(-a.step_size), fbits(a.bc2_sqrt)},
        a.skip, AdamFill{a.amsgrad});
}

void sgd_update(std::span<const backend::Backend::SgdSlot> slots, const backend::Backend::SgdArgs& a) {
  const int32_t flags =
      (a.maximize ? 2 : 0) | (a.nesterov ? 4 : 0) | (a.first_step ? 8 : 0) | (a.weight_decay != 0.0 ? 16 : 0);
  multi("sgd", slots, 3, {0, flags, fbits(a.lr), fbits(a.momentum), fbits(1.0 - a.dampening), fbits(a.weight_decay)},
        a.skip, SgdFill{});
}

void adagrad_update(std::span<const backend::Backend::AdagradSlot> slots, const backend::Backend::AdagradArgs& a) {
  const int32_t flags = (a.maximize ? 2 : 0) | (a.weight_decay != 0.0 ? 16 : 0);
  multi("adagrad", slots, 3, {0, flags, fbits(-a.clr), fbits(a.weight_decay), fbits(a.eps)}, a.skip, AdagradFill{});
}

void rmsprop_update(std::span<const backend::Backend::RmspropSlot> slots, const backend::Backend::RmspropArgs& a) {
  const int32_t flags = (a.maximize ? 2 : 0) | (a.weight_decay != 0.0 ? 16 : 0);
  multi("rmsprop", slots, 5,
        {0, flags, fbits(-a.lr), fbits(a.alpha), fbits(1.0 - a.alpha), fbits(a.weight_decay), fbits(a.eps),
         fbits(a.momentum)},
        a.skip, RmspropFill{});
}

void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) {
  // The flag takes one binding of its own.
  const std::vector<int32_t> head{0, elem_offset(flag)};
  const size_t G = Context::require("optimizer").cpu_adapter() ? 1 : std::max<size_t>(slots_per_dispatch(2), 1);
  for (size_t s0 = 0; s0 < xs.size(); s0 += G) {
    const auto part = xs.subspan(s0, std::min(G, xs.size() - s0));
    std::vector<Arg> args{{"flag", flag.dtype(), true}};
    std::vector<BufferRef> buffers{ref(flag)};
    std::vector<int32_t> params = head;
    std::string body;
    int64_t start = 0;
    int s = 0;
    for (const Tensor& x : part) {
      if (x.numel() == 0) continue;
      const size_t base = params.size();
      params.push_back(i32(start, "elements"));
      params.push_back(i32(x.numel(), "numel"));
      FlagFill{}(x, s, base, args, buffers, params, body);
      start += x.numel();
      ++s;
    }
    if (start == 0) continue;
    params[0] = i32(start, "elements");
    run("optim", "nonfinite", args, buffers, params, start, {{"SLOTS", body}});
  }
}

}  // namespace st::backend::wgpu
