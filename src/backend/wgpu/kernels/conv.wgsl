// Convolution helpers and pooling over contiguous NCHW planes. P = [count, planes or batch,
// in offset, out offset, then the geometry C H W kh kw sh sw ph pw dh dw OH OW col_ld
// col_batch_stride (G(0)..G(14)), then extras at P[19]...]. The pooling backward kernels
// gather: one invocation per input-gradient element, so no two invocations write one
// element and sums are deterministic without atomics.
//@kernel im2col
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let L = G(11) * G(12);
  let l = t % L;
  let q = t / L;
  let j = q % G(4);
  let i = (q / G(4)) % G(3);
  let c = (q / (G(4) * G(3))) % G(0);
  let n = q / (G(4) * G(3) * G(0));
  let oh = l / G(12);
  let ow = l % G(12);
  let h = oh * G(5) - G(7) + i * G(9);
  let w = ow * G(6) - G(8) + j * G(10);
  var v = 0.0;
  if (h >= 0 && h < G(1) && w >= 0 && w < G(2)) { v = ldf_x(P[2] + ((n * G(0) + c) * G(1) + h) * G(2) + w); }
  let r = (c * G(3) + i) * G(4) + j;
  stf_out(P[3] + r * G(13) + n * G(14) + l, v);
}
//@kernel col2im
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let w = t % G(2);
  let h = (t / G(2)) % G(1);
  let c = (t / (G(2) * G(1))) % G(0);
  let n = t / (G(2) * G(1) * G(0));
  var s = 0.0;
  for (var i = 0; i < G(3); i = i + 1) {
    let hh = h + G(7) - i * G(9);
    if (hh < 0 || hh % G(5) != 0 || hh / G(5) >= G(11)) { continue; }
    for (var j = 0; j < G(4); j = j + 1) {
      let ww = w + G(8) - j * G(10);
      if (ww < 0 || ww % G(6) != 0 || ww / G(6) >= G(12)) { continue; }
      let r = (c * G(3) + i) * G(4) + j;
      s = s + ldf_x(P[2] + r * G(13) + n * G(14) + (hh / G(5)) * G(12) + ww / G(6));
    }
  }
  stf_out(P[3] + t, s);
}
//@kernel max_pool
// extras: P[19] = indices offset. The CPU's scan order and NaN rule (a NaN replaces the max).
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let ow = t % G(12);
  let oh = (t / G(12)) % G(11);
  let p = t / (G(12) * G(11));
  var h0 = oh * G(5) - G(7);
  let h1 = min(h0 + (G(3) - 1) * G(9) + 1, G(1));
  while (h0 < 0) { h0 = h0 + G(9); }
  var w0 = ow * G(6) - G(8);
  let w1 = min(w0 + (G(4) - 1) * G(10) + 1, G(2));
  while (w0 < 0) { w0 = w0 + G(10); }
  var best = h0 * G(2) + w0;
  var m = -f_inf();
  let base = P[2] + p * G(1) * G(2);
  for (var h = h0; h < h1; h = h + G(9)) {
    for (var w = w0; w < w1; w = w + G(10)) {
      let v = ldf_x(base + h * G(2) + w);
      if (v > m || is_nan(v)) { m = v; best = h * G(2) + w; }
    }
  }
  stf_out(P[3] + t, m);
  sti_indices(P[19] + t, best);
}
//@kernel max_pool_backward
// x = gy, indices at P[19]. Gathered: one invocation per input-gradient element (h, w) of a
// plane sums gy over the windows that contain it and chose it (kernel offsets i, j with
// h = oh * sh - ph + i * dh), in increasing (oh, ow) order; no atomics, deterministic.
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let HW = G(1) * G(2);
  let e = t % HW;
  let p = t / HW;
  let h = e / G(2);
  let w = e % G(2);
  let O = G(11) * G(12);
  var acc = 0.0;
  for (var i = G(3) - 1; i >= 0; i = i - 1) {
    let hh = h + G(7) - i * G(9);
    if (hh < 0 || hh % G(5) != 0 || hh / G(5) >= G(11)) { continue; }
    let oh = hh / G(5);
    for (var j = G(4) - 1; j >= 0; j = j - 1) {
      let ww = w + G(8) - j * G(10);
      if (ww < 0 || ww % G(6) != 0 || ww / G(6) >= G(12)) { continue; }
      let o = p * O + oh * G(12) + ww / G(6);
      if (ldi_indices(P[19] + o) == e) { acc = acc + ldf_x(P[2] + o); }
    }
  }
  stf_out(P[3] + t, acc);
}
//@kernel avg_pool
// extras: P[19] = count_include_pad, P[20] = divisor_override (0: none)
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let ow = t % G(12);
  let oh = (t / G(12)) % G(11);
  let p = t / (G(12) * G(11));
  {{WINDOW}}
  var s = 0.0;
  let base = P[2] + p * G(1) * G(2);
  for (var h = h0; h < h1; h = h + 1) {
    for (var w = w0; w < w1; w = w + 1) { s = s + ldf_x(base + h * G(2) + w); }
  }
  stf_out(P[3] + t, select(0.0, s / f32(div), div > 0));
}
//@kernel avg_pool_backward
// Gathered: one invocation per input-gradient element (h, w) sums gy / divisor over the output
// positions whose window (the WINDOW text) contains it; the RANGE text bounds the candidates (a
// superset, each checked), visited in increasing (oh, ow) order; no atomics, deterministic.
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let HW = G(1) * G(2);
  let e = t % HW;
  let p = t / HW;
  let h = e / G(2);
  let w = e % G(2);
  {{RANGE}}
  var acc = 0.0;
  for (var oh = oh_lo; oh <= oh_hi; oh = oh + 1) {
    for (var ow = ow_lo; ow <= ow_hi; ow = ow + 1) {
      {{WINDOW}}
      if (div <= 0 || h < h0 || h >= h1 || w < w0 || w >= w1) { continue; }
      acc = acc + ldf_x(P[2] + (p * G(11) + oh) * G(12) + ow) / f32(div);
    }
  }
  stf_out(P[3] + t, acc);
}
//@kernel dw_forward
// Depthwise convolution (groups == C): x = input, out, extras P[19] = w off, P[20] = bias off, P[21] = has bias.
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let ow = t % G(12);
  let oh = (t / G(12)) % G(11);
  let p = t / (G(12) * G(11));
  let c = p % G(0);
  var acc = 0.0;
  if (P[21] == 1) { acc = ldf_b(P[20] + c); }
  for (var i = 0; i < G(3); i = i + 1) {
    let h = oh * G(5) - G(7) + i * G(9);
    if (h < 0 || h >= G(1)) { continue; }
    for (var j = 0; j < G(4); j = j + 1) {
      let w = ow * G(6) - G(8) + j * G(10);
      if (w < 0 || w >= G(2)) { continue; }
      acc = acc + ldf_w(P[19] + (c * G(3) + i) * G(4) + j) * ldf_x(P[2] + (p * G(1) + h) * G(2) + w);
    }
  }
  stf_out(P[3] + t, acc);
}
//@kernel dw_backward_input
// x = gy, out = gx, extras P[19] = w off.
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let w = t % G(2);
  let h = (t / G(2)) % G(1);
  let p = t / (G(2) * G(1));
  let c = p % G(0);
  var s = 0.0;
  for (var i = 0; i < G(3); i = i + 1) {
    let hh = h + G(7) - i * G(9);
    if (hh < 0 || hh % G(5) != 0 || hh / G(5) >= G(11)) { continue; }
    for (var j = 0; j < G(4); j = j + 1) {
      let ww = w + G(8) - j * G(10);
      if (ww < 0 || ww % G(6) != 0 || ww / G(6) >= G(12)) { continue; }
      s = s + ldf_w(P[19] + (c * G(3) + i) * G(4) + j) * ldf_x(P[2] + (p * G(11) + hh / G(5)) * G(12) + ww / G(6));
    }
  }
  stf_out(P[3] + t, s);
}
//@kernel dw_backward_weight
// One workgroup per tap (c, i, j): sum over batch and output positions of gy * x. x = gy (P[2]),
// extras P[19] = input off (binding `w` holds the input here), out = gw.
var<workgroup> sh: array<f32, 256>;
fn G(k: i32) -> i32 { return P[4 + k]; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let tap = i32(wid.y * nw.x + wid.x);
  if (tap >= P[0]) { return; }
  let j = tap % G(4);
  let i = (tap / G(4)) % G(3);
  let c = tap / (G(4) * G(3));
  let L = G(11) * G(12);
  let total = P[1] * L;
  var acc = 0.0;
  for (var e = i32(lid); e < total; e = e + 256) {
    let n = e / L;
    let l = e % L;
    let h = (l / G(12)) * G(5) - G(7) + i * G(9);
    let w = (l % G(12)) * G(6) - G(8) + j * G(10);
    if (h >= 0 && h < G(1) && w >= 0 && w < G(2)) {
      let plane = n * G(0) + c;
      acc = acc + ldf_x(P[2] + plane * L + l) * ldf_w(P[19] + (plane * G(1) + h) * G(2) + w);
    }
  }
  sh[lid] = acc;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s) { sh[lid] = sh[lid] + sh[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { stf_out(P[3] + tap, sh[0]); }
}
