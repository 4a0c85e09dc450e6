// Philox4x32-10 draws, element for element the numbers the CPU draws (src/core/generator.cpp,
// src/backend/cpu/random.cpp): element i takes block (counter + i / 4) for uniforms and the
// dropout mask, (counter + i / 2) for normals (Box-Muller on a pair).
// P = [n, out offset, seed lo, seed hi, counter lo, counter hi, then bits of p0, p1 (or scale, keep)].
// poisson: the same first six words, then the rates' offset and the round key's lo and hi words.
//@part philox
fn mulhilo(a: u32, b: u32) -> vec2<u32> {  // (high, low) words of the 64-bit product
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let ll = al * bl;
  let lh = al * bh;
  let hl = ah * bl;
  let hh = ah * bh;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  let hi = hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
  return vec2<u32>(hi, a * b);
}
// The four words of block `ctr` (64 bits as lo, hi words) under `key` (seed lo, hi). It reads no
// parameter words, so kernels of other families use this part too (attention.wgsl's dropout).
fn philox4x32(ctr: vec2<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = vec4<u32>(ctr.x, ctr.y, 0u, 0u);
  var k0 = key.x;
  var k1 = key.y;
  for (var r = 0; r < 10; r = r + 1) {
    let p0 = mulhilo(0xD2511F53u, c.x);
    let p1 = mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k0, p1.y, p0.x ^ c.w ^ k1, p0.y);
    k0 = k0 + 0x9E3779B9u;
    k1 = k1 + 0xBB67AE85u;
  }
  return c;
}
//@part philox_stream
fn philox_key(block: u32, key: vec2<u32>) -> vec4<u32> {  // block `counter + block`, counter = P[4], P[5]
  let lo = u32(P[4]) + block;
  let carry = select(0u, 1u, lo < block);
  return philox4x32(vec2<u32>(lo, u32(P[5]) + carry), key);
}
fn philox(block: u32) -> vec4<u32> { return philox_key(block, vec2<u32>(u32(P[2]), u32(P[3]))); }
//@kernel uniform
//@use philox
//@use philox_stream
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  {{BODY}}
}
//@kernel poisson
//@use philox
//@use philox_stream
// Backend::poisson in float32 (WGSL has no float64): the CPU's algorithm (src/backend/poisson_sampler.h)
// on 24-bit uniforms, so counts follow the same law but are not the CPU's numbers. Element i's attempt r
// reads block (counter + i) under key seed + r * round key (64-bit sums in two words).
fn key_of(round: u32) -> vec2<u32> {
  let step = vec2<u32>(u32(P[7]), u32(P[8]));
  let mul_lo = mulhilo(step.x, round);
  let lo = u32(P[2]) + mul_lo.y;
  let carry = select(0u, 1u, lo < mul_lo.y);
  return vec2<u32>(lo, u32(P[3]) + mul_lo.x + step.y * round + carry);
}
fn unit(w: u32) -> f32 { return f32(w >> 8u) * (1.0 / 16777216.0); }
fn ln1p(t: f32) -> f32 {  // log(1 + t) with the rounding of 1 + t corrected
  let u = 1.0 + t;
  if (u == 1.0) { return t; }
  return log(u) * t / (u - 1.0);
}
// log P(k) = k log(rate) - rate - log(k!): a sum for small k, Stirling's series around k otherwise
// (written through log1p so float32 keeps the O(1) difference of two O(rate) terms).
fn log_pmf(k: f32, rate: f32) -> f32 {
  if (k < 10.0) {
    var lf = 0.0;
    for (var j = 2.0; j <= k; j = j + 1.0) { lf = lf + log(j); }
    return k * log(rate) - rate - lf;
  }
  let t = (rate - k) / k;
  return k * (ln1p(t) - t) - 0.5 * log(6.283185307179586 * k) - 1.0 / (12.0 * k) + 1.0 / (360.0 * k * k * k);
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let rate = ldf_rates(P[6] + i);
  var k = 0.0;
  var round = 0u;
  if (rate > 0.0 && rate < 10.0) {
    let limit = exp(-rate);
    var product = 1.0;
    loop {
      let b = philox_key(u32(i), key_of(round));
      round = round + 1u;
      product = product * unit(b.x);
      if (product <= limit) { break; }
      k = k + 1.0;
      product = product * unit(b.z);
      if (product <= limit) { break; }
      k = k + 1.0;
    }
  } else if (rate >= 10.0) {
    let sq = sqrt(rate);
    let b0 = 0.931 + 2.53 * sq;
    let a = -0.059 + 0.02483 * b0;
    let log_inv_alpha = log(1.1239 + 1.1328 / (b0 - 3.4));
    let v_r = 0.9277 - 3.6224 / (b0 - 2.0);
    loop {
      let b = philox_key(u32(i), key_of(round));
      round = round + 1u;
      let u = unit(b.x);
      let v = unit(b.z);
      let us = 0.5 - abs(u - 0.5);
      k = floor((2.0 * a / us + b0) * (u - 0.5) + rate + 0.43);
      if (us >= 0.07 && v <= v_r) { break; }
      if (k < 0.0 || (us < 0.013 && v > us)) { continue; }
      if (log(v) + log_inv_alpha - log(a / (us * us) + b0) <= log_pmf(k, rate)) { break; }
    }
  }
  stf_out(P[1] + i, k);
}
