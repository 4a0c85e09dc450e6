// Row kernels over a contiguous (rows, cols) float tensor, one workgroup per row with a tree
// in workgroup memory: softmax / log-softmax and their backward, layer norm and its input
// gradient; the layer-norm weight/bias gradients sum over rows, one invocation per column.
//@part row_tree
// Row reductions over a 256-invocation workgroup: each invocation stores its partial in sh[lid],
// then tree_max / tree_sum return the row's max (NaN-propagating) / sum to every invocation.
var<workgroup> sh: array<f32, 256>;
fn tree_max(lid: u32) -> f32 {
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s) { sh[lid] = f_max(sh[lid], sh[lid + s]); }
    workgroupBarrier();
  }
  let r = sh[0];
  workgroupBarrier();
  return r;
}
fn tree_sum(lid: u32) -> f32 {
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s) { sh[lid] = sh[lid] + sh[lid + s]; }
    workgroupBarrier();
  }
  let r = sh[0];
  workgroupBarrier();
  return r;
}
//@part row_max_sumexp
// (max, sum of exp(x - max)) over x[xb, xb + cols), for every invocation (needs row_tree and an x
// operand): the shared first half of softmax and the fused cross-entropy.
fn row_max_sumexp(xb: i32, cols: i32, lid: u32) -> vec2<f32> {
  var m = -f_inf();
  for (var j = i32(lid); j < cols; j = j + 256) { m = f_max(m, ldf_x(xb + j)); }
  sh[lid] = m;
  m = tree_max(lid);
  var s = 0.0;
  for (var j = i32(lid); j < cols; j = j + 256) { s = s + exp(ldf_x(xb + j) - m); }
  sh[lid] = s;
  return vec2<f32>(m, tree_sum(lid));
}
//@kernel softmax
// P = [rows, cols, log, x offset, out offset]
//@use row_tree
//@use row_max_sumexp
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = i32(wid.y * nw.x + wid.x);
  if (row >= P[0]) { return; }
  let cols = P[1];
  let xb = P[3] + row * cols;
  let ob = P[4] + row * cols;
  let ms = row_max_sumexp(xb, cols, lid);
  let m = ms.x;
  let s = ms.y;
  let ls = log(s);
  for (var j = i32(lid); j < cols; j = j + 256) {
    let z = ldf_x(xb + j) - m;
    if (P[2] == 1) { stf_out(ob + j, z - ls); } else { stf_out(ob + j, exp(z) / s); }
  }
}
//@kernel softmax_backward
// P = [rows, cols, log, g offset, y offset, dx offset]
//@use row_tree
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = i32(wid.y * nw.x + wid.x);
  if (row >= P[0]) { return; }
  let cols = P[1];
  let gb = P[3] + row * cols;
  let yb = P[4] + row * cols;
  let db = P[5] + row * cols;
  let lg = P[2] == 1;
  var s = 0.0;
  for (var j = i32(lid); j < cols; j = j + 256) {
    s = s + select(ldf_g(gb + j) * ldf_y(yb + j), ldf_g(gb + j), lg);
  }
  sh[lid] = s;
  let tot = tree_sum(lid);
  for (var j = i32(lid); j < cols; j = j + 256) {
    let g = ldf_g(gb + j);
    let y = ldf_y(yb + j);
    stf_dx(db + j, select(y * (g - tot), g - exp(y) * tot, lg));
  }
}
//@kernel layer_norm
// P = [rows, cols, has w, has b, x off, w off, b off, y off, mean off, rstd off, eps bits]
//@use row_tree
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = i32(wid.y * nw.x + wid.x);
  if (row >= P[0]) { return; }
  let cols = P[1];
  let xb = P[4] + row * cols;
  var s = 0.0;
  for (var j = i32(lid); j < cols; j = j + 256) { s = s + ldf_x(xb + j); }
  sh[lid] = s;
  let mean = tree_sum(lid) / f32(cols);
  var v = 0.0;
  for (var j = i32(lid); j < cols; j = j + 256) { let d = ldf_x(xb + j) - mean; v = v + d * d; }
  sh[lid] = v;
  let rstd = 1.0 / sqrt(tree_sum(lid) / f32(cols) + pf(10));
  for (var j = i32(lid); j < cols; j = j + 256) {
    var y = (ldf_x(xb + j) - mean) * rstd;
    if (P[2] == 1) { y = y * ldf_w(P[5] + j); }
    if (P[3] == 1) { y = y + ldf_b(P[6] + j); }
    stf_y(P[7] + row * cols + j, y);
  }
  if (lid == 0u) {
    stf_mean(P[8] + row, mean);
    stf_rstd(P[9] + row, rstd);
  }
}
//@kernel layer_norm_dx
// P = [rows, cols, has w, g off, x off, mean off, rstd off, w off, dx off]
// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w
var<workgroup> sa: array<f32, 256>;
var<workgroup> sb: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = i32(wid.y * nw.x + wid.x);
  if (row >= P[0]) { return; }
  let cols = P[1];
  let mean = ldf_mean(P[5] + row);
  let rstd = ldf_rstd(P[6] + row);
  var s1 = 0.0;
  var s2 = 0.0;
  for (var j = i32(lid); j < cols; j = j + 256) {
    var gw = ldf_g(P[3] + row * cols + j);
    if (P[2] == 1) { gw = gw * ldf_w(P[7] + j); }
    let xh = (ldf_x(P[4] + row * cols + j) - mean) * rstd;
    s1 = s1 + gw;
    s2 = s2 + gw * xh;
  }
  sa[lid] = s1;
  sb[lid] = s2;
  workgroupBarrier();
  for (var t = 128u; t > 0u; t = t >> 1u) {
    if (lid < t) { sa[lid] = sa[lid] + sa[lid + t]; sb[lid] = sb[lid] + sb[lid + t]; }
    workgroupBarrier();
  }
  let m1 = sa[0] / f32(cols);
  let m2 = sb[0] / f32(cols);
  for (var j = i32(lid); j < cols; j = j + 256) {
    var gw = ldf_g(P[3] + row * cols + j);
    if (P[2] == 1) { gw = gw * ldf_w(P[7] + j); }
    let xh = (ldf_x(P[4] + row * cols + j) - mean) * rstd;
    stf_dx(P[8] + row * cols + j, rstd * (gw - m1 - xh * m2));
  }
}
//@kernel layer_norm_dwdb
// P = [rows, cols, want dw, want db, g off, x off, mean off, rstd off, dw off, db off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let j = linear_id(wid, nw, lid, 256u);
  let cols = P[1];
  if (j >= cols) { return; }
  var dw = 0.0;
  var db = 0.0;
  for (var r = 0; r < P[0]; r = r + 1) {
    let g = ldf_g(P[4] + r * cols + j);
    dw = dw + g * (ldf_x(P[5] + r * cols + j) - ldf_mean(P[6] + r)) * ldf_rstd(P[7] + r);
    db = db + g;
  }
  if (P[2] == 1) { stf_dw(P[8] + j, dw); }
  if (P[3] == 1) { stf_db(P[9] + j, db); }
}
//@kernel attention_softmax
// P = [rows, L, S, causal, s off, p off, lse off, scale bits]; the CPU's rules: row r sees
// columns j < min(S, r % L + 1) when causal; a row with nothing visible (or a non-finite max)
// gets p = 0 and lse = -inf (the max). p may be s itself: every read of a column happens
// before the barrier that precedes the write of that column.
var<workgroup> sh: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let r = i32(wid.y * nw.x + wid.x);
  if (r >= P[0]) { return; }
  let S = P[2];
  var n = S;
  if (P[3] == 1) { n = min(S, r % P[1] + 1); }
  let sc = pf(7);
  let xb = P[4] + r * S;
  let yb = P[5] + r * S;
  var m = -f_inf();
  for (var j = i32(lid); j < n; j = j + 256) { m = max(m, sc * ldf_s(xb + j)); }
  sh[lid] = m;
  workgroupBarrier();
  for (var t = 128u; t > 0u; t = t >> 1u) {
    if (lid < t) { sh[lid] = max(sh[lid], sh[lid + t]); }
    workgroupBarrier();
  }
  m = sh[0];
  workgroupBarrier();
  let dead = n == 0 || is_inf(m) || is_nan(m);
  var s = 0.0;
  if (!dead) {
    for (var j = i32(lid); j < n; j = j + 256) { s = s + exp(sc * ldf_s(xb + j) - m); }
  }
  sh[lid] = s;
  workgroupBarrier();
  for (var t = 128u; t > 0u; t = t >> 1u) {
    if (lid < t) { sh[lid] = sh[lid] + sh[lid + t]; }
    workgroupBarrier();
  }
  s = sh[0];
  workgroupBarrier();
  for (var j = i32(lid); j < S; j = j + 256) {
    var v = 0.0;
    if (!dead && j < n) { v = exp(sc * ldf_s(xb + j) - m) / s; }
    stf_p(yb + j, v);
  }
  if (lid == 0u) {
    if (n == 0) { stf_lse(P[6] + r, -f_inf()); } else if (dead) { stf_lse(P[6] + r, m); } else { stf_lse(P[6] + r, m + log(s)); }
  }
}
//@kernel attention_softmax_backward
// P = [rows * S, L, S, causal, s off, dp off, lse off, delta off, scale bits]; elementwise:
// s <- p = exp(scale * s - lse) (0 where masked or lse is not finite), dp <- scale * p * (dp - delta).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let S = P[2];
  let r = t / S;
  let j = t % S;
  var n = S;
  if (P[3] == 1) { n = min(S, r % P[1] + 1); }
  let l = ldf_lse(P[6] + r);
  let sc = pf(8);
  var pj = 0.0;
  if (j < n && !is_inf(l) && !is_nan(l)) { pj = exp(sc * ldf_s(P[4] + t) - l); }
  stf_s(P[4] + t, pj);
  stf_dp(P[5] + t, sc * pj * (ldf_dp(P[5] + t) - ldf_delta(P[7] + r)));
}
//@kernel cross_entropy_rows
// P = [rows, cols, ignore index, x off, t off, loss off, lse off, bits of scale]: lse[r] =
// logsumexp(x_r), loss[r] = scale (lse[r] - x[r, t_r]), 0 where t_r is the ignore index, NaN where t_r is out of range (the
// op layer checks targets unless the host copy's range vouched for them: never read past the row).
//@use row_tree
//@use row_max_sumexp
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = i32(wid.y * nw.x + wid.x);
  if (row >= P[0]) { return; }
  let cols = P[1];
  let xb = P[3] + row * cols;
  let ms = row_max_sumexp(xb, cols, lid);
  let m = ms.x;
  let s = ms.y;
  if (lid == 0u) {
    let lse = m + log(s);
    let t = ldi_t(P[4] + row);
    var loss = 0.0;
    if (t != P[2]) {
      loss = f_nan();
      if (t >= 0 && t < cols) { loss = pf(7) * (lse - ldf_x(xb + t)); }
    }
    stf_lse(P[6] + row, lse);
    stf_loss(P[5] + row, loss);
  }
}
//@kernel cross_entropy_rows_backward
// P = [rows * cols, cols, ignore index, x off, t off, lse off, g off, dx off, g stride (1, or 0:
// one g for every row, or -1: no g, each g[r] = 1), bits of scale]; elementwise: dx[r, j] = scale
// g[r] (exp(x[r, j] - lse[r]) - (j == t_r)), 0 where t_r is the ignore index.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = linear_id(wid, nw, lid, 256u);
  if (e >= P[0]) { return; }
  let cols = P[1];
  let r = e / cols;
  let j = e % cols;
  let t = ldi_t(P[4] + r);
  var v = 0.0;
  if (t != P[2]) {
    v = exp(ldf_x(P[3] + e) - ldf_lse(P[5] + r));
    if (j == t) { v = v - 1.0; }
    var g = 1.0;
    if (P[8] >= 0) { g = ldf_g(P[6] + r * P[8]); }
    v = v * (pf(9) * g);
  }
  stf_dx(P[7] + e, v);
}
