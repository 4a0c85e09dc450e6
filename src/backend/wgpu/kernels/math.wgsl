// Shared scalar functions (WGSL lacks erf, log1p, expm1 and a pow defined for x < 0).
fn f_erf(x: f32) -> f32 {
  let a = abs(x);
  if (a < 0.5) {  // Taylor series: |error| < 4e-7 here
    let x2 = x * x;
    return 1.1283791671 * x * (1.0 - x2 * (0.3333333333 - x2 * (0.1 - x2 * (0.0238095238 - x2 * 0.0046296296))));
  }
  // Abramowitz-Stegun 7.1.26, |error| < 1.5e-7
  let t = 1.0 / (1.0 + 0.3275911 * a);
  let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-a * a);
  return select(y, -y, x < 0.0);
}
fn f_log1p(x: f32) -> f32 {
  let u = 1.0 + x;
  if (u == 1.0) { return x; }
  if (is_inf(u)) { return u; }
  return log(u) * x / (u - 1.0);
}
fn f_expm1(x: f32) -> f32 {
  if (abs(x) < 1e-5) { return x + 0.5 * x * x; }
  let u = exp(x);
  if (is_inf(u)) { return u; }
  if (u - 1.0 == -1.0) { return -1.0; }
  return (u - 1.0) * x / log(u);
}
fn f_pow(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return 1.0; }
  if (is_nan(a) || is_nan(b)) { return f_nan(); }
  if (a == 0.0) { return select(0.0, f_inf(), b < 0.0); }
  if (a < 0.0) {
    if (floor(b) != b) { return f_nan(); }
    let m = exp2(b * log2(-a));
    let odd = abs(b) < 16777216.0 && (i32(abs(b)) & 1) == 1;
    return select(m, -m, odd);
  }
  return exp2(b * log2(a));
}
fn i_pow(a: i32, b: i32) -> i32 {
  if (b < 0) { return select(0, select(-1, 1, (b & 1) == 0), a == -1) + select(0, 1, a == 1); }
  var r = 1;
  var base = a;
  var e = b;
  loop {
    if (e == 0) { break; }
    if ((e & 1) == 1) { r = r * base; }
    base = base * base;
    e = e >> 1u;
  }
  return r;
}
fn f_max(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return f_nan(); } return max(a, b); }
fn f_min(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return f_nan(); } return min(a, b); }
fn f_sign(v: f32) -> f32 { if (is_nan(v)) { return v; } return select(select(0.0, -1.0, v < 0.0), 1.0, v > 0.0); }
fn f_floordiv(a: f32, b: f32) -> f32 { return floor(a / b); }
fn f_rem(a: f32, b: f32) -> f32 {
  let r = a - b * trunc(a / b);
  return select(r, r + b, r != 0.0 && ((r < 0.0) != (b < 0.0)));
}
// The truncated remainder as a - (a / b) * b: NVIDIA's Vulkan driver (580) gave a wrong i32 `%`
// for negative divisors (9 % -4 -> 9), division is right.
fn i_floordiv(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let q = a / b;
  return select(q, q - 1, (a - q * b != 0) && ((a < 0) != (b < 0)));
}
fn i_rem(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let r = a - (a / b) * b;
  return select(r, r + b, r != 0 && ((r < 0) != (b < 0)));
}
fn f_tanh(x: f32) -> f32 {  // WGSL's tanh overflows to NaN for large |x| on some drivers
  if (abs(x) > 15.0) { return sign(x); }
  return tanh(x);
}
fn f_sigmoid(x: f32) -> f32 {
  if (x >= 0.0) { return 1.0 / (1.0 + exp(-x)); }
  let e = exp(x);
  return e / (1.0 + e);
}
fn f_gelu(x: f32) -> f32 { return 0.5 * x * (1.0 + f_erf(x * 0.7071067811865476)); }
fn f_gelu_tanh(x: f32) -> f32 { return 0.5 * x * (1.0 + f_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
fn f_gelu_grad(g: f32, x: f32) -> f32 {
  let cdf = 0.5 * (1.0 + f_erf(x * 0.7071067811865476));
  let pdf = exp(-0.5 * x * x) * 0.3989422804014327;
  return g * (cdf + x * pdf);
}
fn f_gelu_tanh_grad(g: f32, x: f32) -> f32 {
  let k = 0.7978845608028654;
  let t = f_tanh(k * (x + 0.044715 * x * x * x));
  return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x));
}
fn f_softplus(v: f32, beta: f32, threshold: f32) -> f32 {
  if (v * beta > threshold) { return v; }
  return f_log1p(exp(v * beta)) / beta;
}
fn f_atanh(x: f32) -> f32 { return 0.5 * f_log1p(2.0 * x / (1.0 - x)); }
fn f_clamp(v: f32, lo: f32, hi: f32) -> f32 {
  if (is_nan(v)) { return v; }
  var r = v;
  if (!is_nan(lo) && r < lo) { r = lo; }
  if (!is_nan(hi) && r > hi) { r = hi; }
  return r;
}
fn i_clamp(v: i32, lo: f32, hi: f32) -> i32 {
  var r = v;
  if (!is_nan(lo) && f32(r) < lo) { r = i32(ceil(lo)); }
  if (!is_nan(hi) && f32(r) > hi) { r = i32(floor(hi)); }
  return r;
}
