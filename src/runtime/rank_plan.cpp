#include "spiraltorch/runtime/rank_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"
#include "spiraltorch/wgpu.h"

namespace st::runtime {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int64_t lane_align(int64_t v, int64_t lanes) { return std::max(lanes, (v / lanes) * lanes); }

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

const char* rank_kind_name(RankKind kind) {
  switch (kind) {
    case RankKind::TopK:
      return "topk";
    case RankKind::MidK:
      return "midk";
    case RankKind::BottomK:
      return "bottomk";
    case RankKind::Fft:
      return "fft";
  }
  return "?";
}

RankKind parse_rank_kind(std::string_view name) {
  const std::string key = lower(name);
  if (key == "topk" || key == "top_k") return RankKind::TopK;
  if (key == "midk" || key == "mid_k") return RankKind::MidK;
  if (key == "bottomk" || key == "bottom_k") return RankKind::BottomK;
  if (key == "fft") return RankKind::Fft;
  throw ValueError("unknown rank kind '" + std::string(name) + "', expected 'topk', 'midk', 'bottomk' or 'fft'");
}

RankKind rank_of(RankKind kind) { return kind == RankKind::Fft ? RankKind::TopK : kind; }

bool runtime_ready(const std::string& backend) {
  return backend == "cpu" || (backend == "cuda" && cuda::is_available()) || (backend == "wgpu" && wgpu::is_available());
}

std::string resolve_backend(const std::string& backend) {
  const std::string key = lower(backend);
  if (key.empty() || key == "auto") return cuda::is_available() ? "cuda" : "cpu";
  if (key == "wgpu" || key == "webgpu") return "wgpu";
  if (key == "rocm" || key == "hip") return "hip";
  if (key == "mps" || key == "cuda" || key == "cpu") return key;
  throw ValueError("unknown backend '" + backend + "', expected 'wgpu', 'mps', 'cuda', 'hip', or 'cpu'");
}

DeviceCaps DeviceCaps::for_backend(const std::string& backend, const Overrides& o) {
  DeviceCaps c;
  c.backend = backend;
  if (backend == "wgpu") {
    c.subgroup = true, c.lane_width = 32, c.max_workgroup = 256;
  } else if (backend == "mps") {
    c.subgroup = false, c.lane_width = 32, c.max_workgroup = 256;
  } else if (backend == "cuda") {
    c.subgroup = true, c.lane_width = 32, c.max_workgroup = 1024;
    c.shared_mem_per_workgroup = cuda::is_available() ? 48 * 1024 : 98304;
  } else if (backend == "hip") {
    c.subgroup = true, c.lane_width = 32, c.max_workgroup = 1024, c.shared_mem_per_workgroup = 65536;
  } else if (backend == "cpu") {
    c.subgroup = false, c.lane_width = 1, c.max_workgroup = 128;
  } else {
    throw ValueError("device caps: unknown backend '" + backend + "'");
  }
  auto positive = [](const char* name, const std::optional<int64_t>& v) {
    if (v && *v <= 0) {
      throw ValueError(std::string("device caps '") + name + "' must be a positive integer, got " + std::to_string(*v));
    }
  };
  positive("lane_width", o.lane_width);
  positive("max_workgroup", o.max_workgroup);
  positive("shared_mem_per_workgroup", o.shared_mem_per_workgroup);
  if (o.subgroup) c.subgroup = *o.subgroup;
  if (o.lane_width) c.lane_width = *o.lane_width;
  if (o.max_workgroup) c.max_workgroup = *o.max_workgroup;
  if (o.shared_mem_per_workgroup) c.shared_mem_per_workgroup = o.shared_mem_per_workgroup;
  if (c.lane_width > c.max_workgroup) {
    throw ValueError("lane_width=" + std::to_string(c.lane_width) +
                     " exceeds max_workgroup=" + std::to_string(c.max_workgroup));
  }
  return c;
}

int64_t DeviceCaps::align_workgroup(int64_t w) const {
  const int64_t lanes = lane_width, top = max_workgroup;
  w = std::min(std::max(w, lanes), top);
  const int64_t up = (w + lanes - 1) / lanes * lanes;
  return up <= top ? up : (top / lanes) * lanes;
}

// The upstream baseline formulas, without its environment programs, key-value store and tuner
// table, so a plan depends on its arguments only.
RankChoice baseline_choice(RankKind kind_in, int64_t rows, int64_t cols, int64_t k, const DeviceCaps& caps) {
  const RankKind kind = rank_of(kind_in);
  const int64_t L = caps.lane_width, M = caps.max_workgroup;
  const std::string& be = caps.backend;
  const bool low_latency = rows <= std::max<int64_t>(4 * L, 64) && cols <= 131072 && k <= 8 * L;
  const bool col_heavy = cols > 32768, k_heavy = k > 4 * L;
  bool two_stage;
  if (be == "wgpu" || be == "mps") {
    two_stage = col_heavy || (k_heavy && rows >= 256);
  } else if (be == "cuda" || be == "hip") {
    two_stage = col_heavy || (k_heavy && rows > 8 * L);
  } else {
    two_stage = col_heavy && rows > 512;
  }
  const int64_t target = std::min(std::max(caps.subgroup ? 8 * L : 4 * L, std::min<int64_t>(64, M)), M);
  int64_t wg = rows >= target ? target : std::min(std::max((rows + L - 1) / L * L, L), target);
  wg = caps.align_workgroup(wg);
  const int64_t kl = k > 4 * L ? 32 : (k > 2 * L ? 16 : 8);
  const auto& shared = caps.shared_mem_per_workgroup;
  int64_t ch;
  if (cols <= 16384) {
    ch = 0;
  } else if (be == "cpu") {
    ch = 4096;
  } else {
    ch = shared && *shared < 48 * 1024 ? 4096 : 8192;
  }
  int64_t tile = 256;
  for (const int64_t t : {256, 512, 1024, 2048, 4096, 8192, 16384}) {
    if (t <= cols) tile = t;
  }
  tile = std::min(tile, M * L);
  if (shared) tile = std::min(tile, std::max<int64_t>(128, *shared / 8));
  tile = std::max<int64_t>(128, lane_align(tile, L));
  int64_t ctile = cols > 65536 ? 1024 : (cols > 8192 ? 512 : 256);
  ctile = std::min(ctile, tile);
  if (shared && *shared < 48 * 1024) ctile = std::min<int64_t>(ctile, 512);
  ctile = std::max<int64_t>(128, lane_align(ctile, L));
  if (low_latency) {
    ch = 0;
    tile = std::min<int64_t>(std::max<int64_t>(tile, 128), cols <= 16384 ? 512 : 1024);
    if (kind == RankKind::BottomK) ctile = std::max<int64_t>(std::min(ctile, tile / 2), 64);
  }
  int mk;
  if (be == "wgpu" || be == "mps") {
    mk = caps.subgroup && k <= 256 ? 2 : (k <= 2048 ? 1 : 0);
  } else if (be == "cuda") {
    mk = k <= 4 * L ? 2 : (k <= 4096 ? 1 : 0);
  } else if (be == "hip") {
    mk = k <= 2 * L ? 2 : (k <= 4096 ? 1 : 0);
  } else {
    mk = 0;
  }
  if (low_latency && caps.subgroup && kind == RankKind::TopK && k <= 8 * L) mk = 2;
  const int mkd = mk == 2 ? (k <= 128 ? 4 : 5) : (mk == 1 ? (k <= 1024 ? 1 : 2) : 3);
  RankChoice c;
  c.use_two_stage = two_stage && !low_latency;
  c.workgroup = wg;
  c.lanes = kl;
  c.channel_stride = ch;
  c.merge_kind = mk;
  c.merge_detail = mkd;
  c.tile = tile;
  c.compaction_tile = ctile;
  c.subgroup = caps.subgroup;
  c.fft_tile = next_pow2(std::min<int64_t>(std::max<int64_t>(cols, 2), 8192));
  c.fft_radix = (k & (k - 1)) == 0 ? 4 : 2;
  c.fft_segments = cols > 131072 ? 4 : (cols > 32768 ? 2 : 1);
  return c;
}

RankPlan plan_rank(RankKind kind, int64_t rows, int64_t cols, int64_t k, const std::string& backend,
                   const DeviceCaps::Overrides& overrides) {
  for (const auto& [name, v] : {std::pair{"rows", rows}, {"cols", cols}, {"k", k}}) {
    if (v <= 0)
      throw ValueError(std::string("rank-plan dimension '") + name + "' must be positive, got " + std::to_string(v));
  }
  if (k > cols) throw ValueError("rank-plan k=" + std::to_string(k) + " exceeds cols=" + std::to_string(cols));
  RankPlan p;
  p.kind = kind;
  p.rows = rows, p.cols = cols, p.k = k;
  const std::string req = lower(backend);
  p.requested_backend = req.empty() ? "auto" : req;
  std::string effective = resolve_backend(backend);
  if (effective == "mps") effective = "cpu";  // no Metal backend here: MPS plans run on the CPU surrogate
  p.effective_backend = effective;
  p.caps = DeviceCaps::for_backend(effective, overrides);
  p.choice = baseline_choice(kind, rows, cols, k, p.caps);
  return p;
}

std::string RankPlan::to_unison_script() const {
  std::ostringstream s;
  const RankChoice& c = choice;
  s << "unison " << rank_kind_name(rank_of(kind)) << " {\n";
  s << "  workgroup " << c.workgroup << "\n  lanes " << c.lanes << "\n";
  if (c.channel_stride) s << "  channel_stride " << c.channel_stride << "\n";
  s << "  merge " << merge_strategy() << " " << merge_detail() << "\n";
  if (c.tile) s << "  tile " << c.tile << "\n";
  if (c.compaction_tile) s << "  compaction_tile " << c.compaction_tile << "\n";
  s << "  two_stage " << (c.use_two_stage ? "true" : "false") << "\n";
  s << "  fft_tile " << c.fft_tile << "\n  fft_radix " << c.fft_radix << "\n  fft_segments " << c.fft_segments << "\n}";
  return s.str();
}

std::string RankPlan::fft_spiralk_hint() const {
  const int64_t t = choice.fft_tile;
  return "soft (tile_cols, " + std::to_string(t) + ", 0.85, c >= " + std::to_string(t) + ");\n" + "soft (radix, " +
         std::to_string(choice.fft_radix) + ", 0.90, true);\n" + "soft (segments, " +
         std::to_string(choice.fft_segments) + ", 0.75, true);";
}

spiralk::Variables RankPlan::spiralk_variables() const {
  const auto d = [](int64_t v) { return spiralk::Value(static_cast<double>(v)); };
  const RankChoice& c = choice;
  return {{"r", d(rows)},
          {"c", d(cols)},
          {"k", d(k)},
          {"sg", spiralk::Value(c.subgroup)},
          {"sgc", d(c.subgroup ? c.lanes : 1)},
          {"kc", d(k <= 1024 ? 1 : (k <= 16384 ? 2 : 3))},
          {"wg", d(c.workgroup)},
          {"kl", d(c.lanes)},
          {"ch", d(c.channel_stride)},
          {"tile", d(c.tile)},
          {"ctile", d(c.compaction_tile)},
          {"u2", spiralk::Value(c.use_two_stage)},
          {"tile_cols", d(c.fft_tile)},
          {"radix", d(c.fft_radix)},
          {"segments", d(c.fft_segments)}};
}

namespace {

constexpr const char* kRewrite = "RankPlan.rewrite_with_spiralk";

int64_t integer_of(const std::string& field, const spiralk::Value& v) {
  const double* x = std::get_if<double>(&v);
  if (!x && std::holds_alternative<bool>(v)) {
    throw ValueError(std::string(kRewrite) + ": field '" + field + "' needs an integer, got " + spiralk::value_str(v));
  }
  if (!x || !std::isfinite(*x) || *x != std::floor(*x) || std::fabs(*x) > 9.0e15) {
    throw ValueError(std::string(kRewrite) + ": field '" + field + "' needs an integer, got " + spiralk::value_str(v));
  }
  return static_cast<int64_t>(*x);
}

bool bool_of(const std::string& field, const spiralk::Value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const double* x = std::get_if<double>(&v); x && (*x == 0.0 || *x == 1.0)) return *x == 1.0;
  throw ValueError(std::string(kRewrite) + ": field '" + field + "' needs true or false, got " + spiralk::value_str(v));
}

}  // namespace

RankPlan RankPlan::rewrite_with_spiralk(std::string_view script, spiralk::Result* result,
                                        const spiralk::Variables& extra) const {
  spiralk::Variables vars = spiralk_variables();
  for (const auto& [name, value] : extra) {
    if (!vars.emplace(name, value).second) {
      throw ValueError(std::string(kRewrite) + ": variable '" + name + "' is the plan's own and cannot be set");
    }
  }
  const spiralk::Program program = spiralk::Program::parse(script);
  spiralk::Result r = program.eval(vars);
  const RankKind rank = rank_of(kind);
  if (r.unison_kind && *r.unison_kind != rank_kind_name(rank)) {
    throw ValueError(std::string(kRewrite) + ": the unison block is for " + *r.unison_kind + ", this plan ranks " +
                     rank_kind_name(rank));
  }
  RankPlan out = *this;
  RankChoice& c = out.choice;
  std::optional<bool> explicit_two_stage, kind_two_stage;
  for (const auto& [field, v] : r.hard) {
    if (field == "workgroup")
      c.workgroup = integer_of(field, v);
    else if (field == "lanes")
      c.lanes = integer_of(field, v);
    else if (field == "channel_stride")
      c.channel_stride = integer_of(field, v);
    else if (field == "tile")
      c.tile = integer_of(field, v);
    else if (field == "compaction_tile")
      c.compaction_tile = integer_of(field, v);
    else if (field == "fft_tile")
      c.fft_tile = integer_of(field, v);
    else if (field == "fft_radix")
      c.fft_radix = integer_of(field, v);
    else if (field == "fft_segments")
      c.fft_segments = integer_of(field, v);
    else if (field == "merge_kind")
      c.merge_kind = static_cast<int>(std::clamp<int64_t>(integer_of(field, v), -1, 99));
    else if (field == "merge_detail")
      c.merge_detail = static_cast<int>(std::clamp<int64_t>(integer_of(field, v), -1, 99));
    else if (field == "two_stage")
      explicit_two_stage = bool_of(field, v);
    else if (field == "algo") {
      // 0 keeps the plan's merge; 1 heap, 2 bitonic, 3 k-way (the upstream numbering).
      const int64_t a = integer_of(field, v);
      if (a < 0 || a > 3)
        throw ValueError(std::string(kRewrite) + ": field 'algo' must be 0..3, got " + std::to_string(a));
      if (a == 1) c.merge_kind = 1, c.merge_detail = 1;
      if (a == 2) c.merge_kind = 0, c.merge_detail = 3;
      if (a == 3) c.merge_kind = 1, c.merge_detail = 2;
    } else if (field == "midk" || field == "bottomk") {
      // 0 keeps the plan's staging, 1 one stage, 2 two stages; applies to plans of that kind only.
      const int64_t s = integer_of(field, v);
      if (s < 0 || s > 2) {
        throw ValueError(std::string(kRewrite) + ": field '" + field + "' must be 0..2, got " + std::to_string(s));
      }
      if (s != 0 && field == rank_kind_name(rank)) kind_two_stage = s == 2;
    }
  }
  if (explicit_two_stage && kind_two_stage && *explicit_two_stage != *kind_two_stage) {
    throw ValueError(std::string(kRewrite) + ": 'two_stage' and '" + rank_kind_name(rank) +
                     "' disagree on two-stage execution");
  }
  if (explicit_two_stage) c.use_two_stage = *explicit_two_stage;
  if (kind_two_stage) c.use_two_stage = *kind_two_stage;
  out.validate();
  if (result) *result = std::move(r);
  return out;
}

void RankPlan::validate() const {
  const RankChoice& c = choice;
  auto fail = [](const std::string& what) { throw ValueError("rank plan: " + what); };
  for (const auto& [name, v] : {std::pair{"workgroup", c.workgroup},
                                {"lanes", c.lanes},
                                {"tile", c.tile},
                                {"compaction_tile", c.compaction_tile}}) {
    if (v <= 0) fail(std::string("choice '") + name + "' must be positive, got " + std::to_string(v));
  }
  if (c.channel_stride < 0) fail("choice 'channel_stride' must be >= 0, got " + std::to_string(c.channel_stride));
  if (c.workgroup > caps.max_workgroup || c.workgroup % caps.lane_width != 0) {
    fail("choice 'workgroup'=" + std::to_string(c.workgroup) + " must be a multiple of the lane width " +
         std::to_string(caps.lane_width) + " and at most " + std::to_string(caps.max_workgroup));
  }
  if (c.merge_kind < 0 || c.merge_kind > 2)
    fail("choice 'merge_kind'=" + std::to_string(c.merge_kind) + " is invalid (0..2)");
  if (c.merge_detail < 0 || c.merge_detail > 5) {
    fail("choice 'merge_detail'=" + std::to_string(c.merge_detail) + " is invalid (0..5)");
  }
  if (c.fft_radix != 2 && c.fft_radix != 4) fail("choice 'fft_radix'=" + std::to_string(c.fft_radix) + " is invalid");
  if (c.fft_tile < 2 || c.fft_tile > (int64_t{1} << 20) || (c.fft_tile & (c.fft_tile - 1)) != 0) {
    fail("choice 'fft_tile'=" + std::to_string(c.fft_tile) + " is invalid (a power of two in [2, 1048576])");
  }
  if (c.fft_segments < 1 || c.fft_segments > 4) {
    fail("choice 'fft_segments'=" + std::to_string(c.fft_segments) + " is invalid (1..4)");
  }
}

}  // namespace st::runtime
