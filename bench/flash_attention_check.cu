// Standalone check of the flash attention kernels (src/backend/cuda/flash_attention.cuh) against a
// float64 host reference: outputs, log-sum-exp and all three gradients for bf16/fp16/fp32-TF32,
// head dims 32/64/128, causal or not, lengths off the 64-row tile, L != S, and the packed
// (B, L, 3, H, D) layout against contiguous copies; then forward/backward times.
// Build and run on a GPU machine from the repository root:
//   nvcc -std=c++20 -O3 -arch=sm_90 -I src -I include bench/flash_attention_check.cu -o /tmp/fc && /tmp/fc
// PyTorch's times for the same shapes: python bench/flash_attention_torch.py
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "backend/cuda/flash_attention.cuh"
using namespace st::backend::cuda;
#define CK(x)                                                             \
  do {                                                                    \
    cudaError_t e = (x);                                                  \
    if (e != cudaSuccess) {                                               \
      printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)
template <typename T>
float tof(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return __bfloat162float(v);
}
template <>
float tof<__half>(__half v) {
  return __half2float(v);
}
template <typename T>
T fromf(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half(v);
  else
    return __float2bfloat16(v);
}
template <typename T>
T* dev(const std::vector<T>& h) {
  T* p;
  CK(cudaMalloc(&p, h.size() * sizeof(T) + 16));
  CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}
template <typename T>
std::vector<T> host(const T* p, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}
double maxrel(const std::vector<double>& ref, const std::vector<double>& got) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num = std::max(num, std::fabs(ref[i] - got[i]));
    den = std::max(den, std::fabs(ref[i]));
  }
  return num / std::max(den, 1.0);
}
inline flash::Layout contiguous_layout(int L, int S, int D) {
  flash::Layout g{};
  g.heads = 1;
  g.L = L;
  g.S = S;
  g.q = {(int64_t)L * D, 0, D};
  g.k = {(int64_t)S * D, 0, D};
  g.v = g.k;
  g.o = g.q;
  g.stat = {L, 0, 1};
  g.dq = g.q;
  g.dk = g.k;
  g.dv = g.v;
  return g;
}
template <typename T, int D>
bool check(const char* name, int B, int L, int S, bool causal, double tol) {
  std::mt19937 g(1234);
  std::normal_distribution<float> nd(0, 1);
  auto mk = [&](size_t n) {
    std::vector<T> v(n);
    for (auto& x : v) x = fromf<T>(nd(g));
    return v;
  };
  auto hq = mk((size_t)B * L * D), hk = mk((size_t)B * S * D), hv = mk((size_t)B * S * D), hdo = mk((size_t)B * L * D);
  const double scale = 1.0 / std::sqrt((double)D);
  std::vector<double> o((size_t)B * L * D), lse((size_t)B * L), dq((size_t)B * L * D, 0), dk((size_t)B * S * D, 0),
      dv((size_t)B * S * D, 0);
  std::vector<float> delta((size_t)B * L);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < L; ++i) {
      std::vector<double> s(S), p(S, 0), dp(S);
      double m = -INFINITY;
      for (int j = 0; j < S; ++j) {
        double a = 0;
        for (int c = 0; c < D; ++c)
          a += tof(hq[((size_t)b * L + i) * D + c]) * (double)tof(hk[((size_t)b * S + j) * D + c]);
        s[j] = (causal && j > i) ? -INFINITY : a * scale;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (int j = 0; j < S; ++j)
        if (s[j] != -INFINITY) {
          p[j] = std::exp(s[j] - m);
          sum += p[j];
        }
      lse[(size_t)b * L + i] = sum > 0 ? m + std::log(sum) : -INFINITY;
      for (int j = 0; j < S; ++j) p[j] = sum > 0 ? p[j] / sum : 0;
      for (int c = 0; c < D; ++c) {
        double a = 0;
        for (int j = 0; j < S; ++j) a += p[j] * tof(hv[((size_t)b * S + j) * D + c]);
        o[((size_t)b * L + i) * D + c] = a;
      }
      double dl = 0;
      for (int c = 0; c < D; ++c) dl += o[((size_t)b * L + i) * D + c] * tof(hdo[((size_t)b * L + i) * D + c]);
      delta[(size_t)b * L + i] = (float)dl;
      for (int j = 0; j < S; ++j) {
        double a = 0;
        for (int c = 0; c < D; ++c)
          a += tof(hdo[((size_t)b * L + i) * D + c]) * (double)tof(hv[((size_t)b * S + j) * D + c]);
        dp[j] = a;
      }
      for (int j = 0; j < S; ++j) {
        const double ds = p[j] * (dp[j] - dl) * scale;
        for (int c = 0; c < D; ++c) {
          dq[((size_t)b * L + i) * D + c] += ds * tof(hk[((size_t)b * S + j) * D + c]);
          dk[((size_t)b * S + j) * D + c] += ds * tof(hq[((size_t)b * L + i) * D + c]);
          dv[((size_t)b * S + j) * D + c] += p[j] * tof(hdo[((size_t)b * L + i) * D + c]);
        }
      }
    }
  T *q = dev(hq), *k = dev(hk), *v = dev(hv), *dout = dev(hdo), *out, *gq, *gk, *gv;
  float *glse, *gdelta = dev(delta);
  CK(cudaMalloc(&out, hq.size() * sizeof(T)));
  CK(cudaMalloc(&gq, hq.size() * sizeof(T)));
  CK(cudaMalloc(&gk, hk.size() * sizeof(T)));
  CK(cudaMalloc(&gv, hv.size() * sizeof(T)));
  CK(cudaMalloc(&glse, (size_t)B * L * 4));
  const flash::Layout lay = contiguous_layout(L, S, D);
  CK((flash::forward<T, D>(q, k, v, out, glse, B, lay, (float)scale, causal, 0)));
  CK((flash::backward<T, D>(q, k, v, dout, glse, gdelta, gq, gk, gv, B, lay, (float)scale, causal, 0)));
  CK(cudaDeviceSynchronize());
  auto cv = [](const std::vector<T>& h) {
    std::vector<double> r(h.size());
    for (size_t i = 0; i < h.size(); ++i) r[i] = tof(h[i]);
    return r;
  };
  auto lg = host(glse, (size_t)B * L);
  std::vector<double> lgd(lg.begin(), lg.end());
  const double e[5] = {maxrel(o, cv(host(out, o.size()))), maxrel(lse, lgd), maxrel(dq, cv(host(gq, dq.size()))),
                       maxrel(dk, cv(host(gk, dk.size()))), maxrel(dv, cv(host(gv, dv.size())))};
  bool ok = true;
  for (double x : e) ok &= x < tol && std::isfinite(x);
  printf("%-6s D=%3d B=%d L=%4d S=%4d causal=%d  rel err out %.2e lse %.2e dq %.2e dk %.2e dv %.2e  %s\n", name, D, B,
         L, S, causal, e[0], e[1], e[2], e[3], e[4], ok ? "ok" : "FAIL");
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(dout);
  cudaFree(out);
  cudaFree(gq);
  cudaFree(gk);
  cudaFree(gv);
  cudaFree(glse);
  cudaFree(gdelta);
  return ok;
}
template <typename T, int D>
void timeit(const char* name, int B, int L, bool causal) {
  size_t n = (size_t)B * L * D;
  T *q, *k, *v, *o, *dq, *dk, *dv;
  float *lse, *delta;
  for (T** p : {&q, &k, &v, &o, &dq, &dk, &dv}) {
    CK(cudaMalloc(p, n * sizeof(T)));
    CK(cudaMemset(*p, 0, n * sizeof(T)));
  }
  CK(cudaMalloc(&lse, B * L * 4));
  CK(cudaMalloc(&delta, B * L * 4));
  CK(cudaMemset(delta, 0, B * L * 4));
  cudaEvent_t a, b2, c;
  cudaEventCreate(&a);
  cudaEventCreate(&b2);
  cudaEventCreate(&c);
  const float sc = 0.125f;
  const int reps = 20;
  const flash::Layout lay = contiguous_layout(L, L, D);
  auto fwd = [&] { CK((flash::forward<T, D>(q, k, v, o, lse, B, lay, sc, causal, 0))); };
  auto bwd = [&] { CK((flash::backward<T, D>(q, k, v, o, lse, delta, dq, dk, dv, B, lay, sc, causal, 0))); };
  for (int w = 0; w < 3; ++w) {
    fwd();
    bwd();
  }
  cudaEventRecord(a);
  for (int r = 0; r < reps; ++r) fwd();
  cudaEventRecord(b2);
  for (int r = 0; r < reps; ++r) bwd();
  cudaEventRecord(c);
  CK(cudaEventSynchronize(c));
  float f, bw;
  cudaEventElapsedTime(&f, a, b2);
  cudaEventElapsedTime(&bw, b2, c);
  f /= reps;
  bw /= reps;
  const double flops = 4.0 * B * (double)L * L * D * (causal ? 0.5 : 1.0);
  printf("TIME %-6s D=%d BH=%d L=%d causal=%d fwd %.3f ms (%.0f TFLOP/s)  bwd %.3f ms (%.0f TFLOP/s, 2.5x fwd flops)\n",
         name, D, B, L, causal, f, flops / f / 1e9, bw, 2.5 * flops / bw / 1e9);
  for (T* p : {q, k, v, o, dq, dk, dv}) cudaFree(p);
  cudaFree(lse);
  cudaFree(delta);
}
// Packed layout: qkv (B, L, 3, H, D), out / dout (B, L, H, D), stats (B, H, L); results equal the
// contiguous run on the same values.
template <typename T, int D>
bool check_packed(int B, int H, int L, bool causal) {
  std::mt19937 g(7);
  std::normal_distribution<float> nd(0, 1);
  const size_t n = (size_t)B * L * 3 * H * D, no = (size_t)B * L * H * D;
  std::vector<T> qkv(n), dout(no);
  for (auto& x : qkv) x = fromf<T>(nd(g));
  for (auto& x : dout) x = fromf<T>(nd(g));
  // contiguous copies (B*H, L, D)
  std::vector<T> cq(no), ck(no), cv(no), cdo(no);
  for (int b = 0; b < B; ++b)
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) {
          const size_t src = ((((size_t)b * L + l) * 3 + 0) * H + h) * D + d,
                       dst = (((size_t)b * H + h) * L + l) * D + d;
          cq[dst] = qkv[src];
          ck[dst] = qkv[src + (size_t)H * D];
          cv[dst] = qkv[src + 2 * (size_t)H * D];
          cdo[dst] = dout[(((size_t)b * L + l) * H + h) * D + d];
        }
  std::vector<float> delta((size_t)B * H * L, 0.25f);
  T *dq = dev(cq), *dk = dev(ck), *dv = dev(cv), *ddo = dev(cdo), *dqkv = dev(qkv), *pdo = dev(dout);
  float *dl = dev(delta), *lse1, *lse2;
  T *o1, *o2, *g1q, *g1k, *g1v, *g2;
  CK(cudaMalloc(&lse1, delta.size() * 4));
  CK(cudaMalloc(&lse2, delta.size() * 4));
  CK(cudaMalloc(&o1, no * sizeof(T)));
  CK(cudaMalloc(&o2, no * sizeof(T)));
  CK(cudaMalloc(&g1q, no * sizeof(T)));
  CK(cudaMalloc(&g1k, no * sizeof(T)));
  CK(cudaMalloc(&g1v, no * sizeof(T)));
  CK(cudaMalloc(&g2, n * sizeof(T)));
  const float sc = 1.0f / std::sqrt((float)D);
  const flash::Layout c = contiguous_layout(L, L, D);
  CK((flash::forward<T, D>(dq, dk, dv, o1, lse1, (int64_t)B * H, c, sc, causal, 0)));
  CK((flash::backward<T, D>(dq, dk, dv, ddo, lse1, dl, g1q, g1k, g1v, (int64_t)B * H, c, sc, causal, 0)));
  flash::Layout p{};
  p.heads = H;
  p.L = L;
  p.S = L;
  p.q = {(int64_t)L * 3 * H * D, D, 3 * H * D};
  p.k = p.q;
  p.v = p.q;
  p.o = {(int64_t)L * H * D, D, H * D};
  p.stat = {(int64_t)H * L, L, 1};
  p.dq = p.q;
  p.dk = p.k;
  p.dv = p.v;
  CK((flash::forward<T, D>(dqkv, dqkv + H * D, dqkv + 2 * H * D, o2, lse2, (int64_t)B * H, p, sc, causal, 0)));
  CK((flash::backward<T, D>(dqkv, dqkv + H * D, dqkv + 2 * H * D, pdo, lse2, dl, g2, g2 + H * D, g2 + 2 * H * D,
                            (int64_t)B * H, p, sc, causal, 0)));
  CK(cudaDeviceSynchronize());
  auto ho1 = host(o1, no), ho2 = host(o2, no), hq = host(g1q, no), hk = host(g1k, no), hv = host(g1v, no),
       h2 = host(g2, n);
  auto l1 = host(lse1, delta.size()), l2 = host(lse2, delta.size());
  size_t bad = 0;
  for (int b = 0; b < B; ++b)
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) {
          const size_t ci = (((size_t)b * H + h) * L + l) * D + d, pi = (((size_t)b * L + l) * H + h) * D + d;
          const size_t qi = ((((size_t)b * L + l) * 3 + 0) * H + h) * D + d;
          bad += tof(ho1[ci]) != tof(ho2[pi]);
          bad += tof(hq[ci]) != tof(h2[qi]) || tof(hk[ci]) != tof(h2[qi + (size_t)H * D]) ||
                 tof(hv[ci]) != tof(h2[qi + 2 * (size_t)H * D]);
        }
  for (size_t i = 0; i < l1.size(); ++i) bad += l1[i] != l2[i];
  printf("packed D=%d B=%d H=%d L=%d causal=%d: %zu mismatches  %s\n", D, B, H, L, causal, bad, bad ? "FAIL" : "ok");
  return bad == 0;
}
int main() {
  bool ok = true;
  ok &= check<__nv_bfloat16, 64>("bf16", 2, 200, 200, true, 3e-2);
  ok &= check<__nv_bfloat16, 64>("bf16", 3, 130, 77, false, 3e-2);
  ok &= check<__nv_bfloat16, 64>("bf16", 2, 64, 200, true, 3e-2);
  ok &= check<__nv_bfloat16, 64>("bf16", 2, 200, 64, true, 3e-2);
  ok &= check<__nv_bfloat16, 128>("bf16", 2, 192, 192, true, 3e-2);
  ok &= check<__nv_bfloat16, 32>("bf16", 2, 100, 160, false, 3e-2);
  ok &= check<__nv_bfloat16, 64>("bf16", 1, 1, 5, true, 3e-2);
  ok &= check<__half, 64>("fp16", 2, 257, 257, true, 1e-2);
  ok &= check<__half, 128>("fp16", 1, 300, 170, false, 1e-2);
  ok &= check<__half, 32>("fp16", 2, 65, 65, true, 1e-2);
  ok &= check<float, 64>("fp32", 2, 200, 200, true, 1e-2);
  ok &= check<float, 64>("fp32", 2, 64, 129, false, 1e-2);
  ok &= check<float, 128>("fp32", 2, 150, 150, true, 1e-2);
  ok &= check<float, 32>("fp32", 1, 70, 70, true, 1e-2);
  ok &= check<float, 64>("fp32", 1, 1, 5, true, 1e-2);
  ok &= check_packed<__nv_bfloat16, 64>(2, 3, 130, true);
  ok &= check_packed<float, 64>(2, 3, 100, false);
  ok &= check_packed<__half, 128>(1, 2, 70, true);
  printf(ok ? "ALL OK\n" : "SOME FAILED\n");
  timeit<__nv_bfloat16, 64>("bf16", 192, 512, true);
  timeit<__nv_bfloat16, 64>("bf16", 192, 512, false);
  timeit<__half, 64>("fp16", 192, 512, true);
  timeit<__nv_bfloat16, 128>("bf16", 96, 1024, true);
  timeit<__nv_bfloat16, 64>("bf16", 64, 2048, true);
  timeit<float, 64>("fp32", 192, 512, true);
  timeit<float, 128>("fp32", 96, 1024, true);
  return ok ? 0 : 1;
}
