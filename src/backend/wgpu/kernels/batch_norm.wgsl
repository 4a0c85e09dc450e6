// Batch norm over contiguous (n, c, l) tensors: one workgroup per channel reduces its n * l
// values with a tree in workgroup memory (two passes for the variance: mean first, then the
// squared deviations, as float32 sums would lose the difference of large moments).
//@kernel stats
// P = [c, n, l, x off, mean off, rstd off, var off, eps bits]
var<workgroup> sh: array<f32, 256>;
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
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let ch = i32(wid.y * nw.x + wid.x);
  if (ch >= P[0]) { return; }
  let c = P[0];
  let l = P[2];
  let total = P[1] * l;
  var s = 0.0;
  for (var e = i32(lid); e < total; e = e + 256) { s = s + ldf_x(P[3] + ((e / l) * c + ch) * l + e % l); }
  sh[lid] = s;
  let mean = tree_sum(lid) / f32(total);
  var q = 0.0;
  for (var e = i32(lid); e < total; e = e + 256) {
    let d = ldf_x(P[3] + ((e / l) * c + ch) * l + e % l) - mean;
    q = q + d * d;
  }
  sh[lid] = q;
  let v = tree_sum(lid) / f32(total);
  if (lid == 0u) {
    stf_mean(P[4] + ch, mean);
    stf_rstd(P[5] + ch, 1.0 / sqrt(v + pf(7)));
    stf_var(P[6] + ch, v);
  }
}
//@kernel apply
// P = [n * c * l, c, l, has w, has b, x off, mean off, rstd off, w off, b off, y off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let ch = (i / P[2]) % P[1];
  var scale = ldf_rstd(P[7] + ch);
  if (P[3] == 1) { scale = scale * ldf_w(P[8] + ch); }
  var y = (ldf_x(P[5] + i) - ldf_mean(P[6] + ch)) * scale;
  if (P[4] == 1) { y = y + ldf_b(P[9] + ch); }
  stf_y(P[10] + i, y);
}
//@kernel backward
// P = [c, n, l, flags (1 has w, 2 dx, 4 dw, 8 db, 16 training), g off, x off, mean off, rstd off, w off,
//      dx off, dw off, db off]. dw = sum g * xhat, db = sum g; dx = w rstd (g - mean(g) - xhat mean(g xhat))
// in training, else g w rstd.
var<workgroup> sa: array<f32, 256>;
var<workgroup> sb: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let ch = i32(wid.y * nw.x + wid.x);
  if (ch >= P[0]) { return; }
  let c = P[0];
  let l = P[2];
  let total = P[1] * l;
  let fl = P[3];
  let mean = ldf_mean(P[6] + ch);
  let rs = ldf_rstd(P[7] + ch);
  var s0 = 0.0;
  var s1 = 0.0;
  for (var e = i32(lid); e < total; e = e + 256) {
    let off = ((e / l) * c + ch) * l + e % l;
    let g = ldf_g(P[4] + off);
    s0 = s0 + g;
    s1 = s1 + g * (ldf_x(P[5] + off) - mean) * rs;
  }
  sa[lid] = s0;
  sb[lid] = s1;
  workgroupBarrier();
  for (var t = 128u; t > 0u; t = t >> 1u) {
    if (lid < t) { sa[lid] = sa[lid] + sa[lid + t]; sb[lid] = sb[lid] + sb[lid + t]; }
    workgroupBarrier();
  }
  let sum_g = sa[0];
  let sum_gx = sb[0];
  if (lid == 0u) {
    if ((fl & 4) != 0) { stf_dw(P[10] + ch, sum_gx); }
    if ((fl & 8) != 0) { stf_db(P[11] + ch, sum_g); }
  }
  if ((fl & 2) == 0) { return; }
  var k = rs;
  if ((fl & 1) != 0) { k = k * ldf_w(P[8] + ch); }
  let mg = sum_g / f32(total);
  let mgx = sum_gx / f32(total);
  for (var e = i32(lid); e < total; e = e + 256) {
    let off = ((e / l) * c + ch) * l + e % l;
    let g = ldf_g(P[4] + off);
    if ((fl & 16) != 0) {
      stf_dx(P[9] + off, k * (g - mg - (ldf_x(P[5] + off) - mean) * rs * mgx));
    } else {
      stf_dx(P[9] + off, k * g);
    }
  }
}
