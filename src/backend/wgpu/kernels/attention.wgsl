// Tiled (flash) attention: softmax(scale q k^T [+ causal mask]) v with an online softmax over key
// tiles, so no (L, S) buffer exists; the forward keeps each row's log-sum-exp and the backward
// recomputes the probabilities tile by tile from it (FlashAttention-2's recurrence). One
// invocation owns one query row (forward, dq) or one key row (dk, dv) and keeps it, and its
// accumulators, in private vec4 arrays; the other operand streams through workgroup memory in
// tiles of BC rows that every invocation of the workgroup reads. Causal tiles past a
// workgroup's last row are never loaded. Every access to a private array has a constant index
// (the {{...}} statements are unrolled by attention.cpp): one dynamic index would move the whole
// array to per-invocation memory (lavapipe: gathers and scatters instead of registers).
//
// P = [BH, H, L, S, d, dv, causal, scale bits, blocks, then per operand slot (offset, batch
// stride, head stride, row stride, column stride) in elements]: slots q 9, k 14, v 19, out/dout
// 24, lse 29, delta 34, dq 39, dk 44, dv 49 (a kernel reads only the slots it binds). A workgroup
// takes one block of WG rows of one (batch, head) pair; `blocks` counts them per pair.
//@part layout
const D4 = {{D4}};
const DV4 = {{DV4}};
const BC = {{BC}};
const WG = 64;
// Element index of (row r, column c) of (batch x head) bh in the operand at slot s.
fn at(s: i32, bh: i32, r: i32, c: i32) -> i32 {
  let h = P[1];
  return P[s] + (bh / h) * P[s + 1] + (bh % h) * P[s + 2] + r * P[s + 3] + c * P[s + 4];
}
fn neg_inf() -> f32 { return -f_inf(); }
//@part ld4_qkv
// Columns c..c+3 (zero from d on) of the row at element e of q / k / v, column stride cs.
fn ld4_q(e: i32, c: i32, d: i32, cs: i32) -> vec4<f32> {
  var x = vec4<f32>(0.0);
  if (c < d) { x.x = ldf_q(e + c * cs); }
  if (c + 1 < d) { x.y = ldf_q(e + (c + 1) * cs); }
  if (c + 2 < d) { x.z = ldf_q(e + (c + 2) * cs); }
  if (c + 3 < d) { x.w = ldf_q(e + (c + 3) * cs); }
  return x;
}
fn ld4_k(e: i32, c: i32, d: i32, cs: i32) -> vec4<f32> {
  var x = vec4<f32>(0.0);
  if (c < d) { x.x = ldf_k(e + c * cs); }
  if (c + 1 < d) { x.y = ldf_k(e + (c + 1) * cs); }
  if (c + 2 < d) { x.z = ldf_k(e + (c + 2) * cs); }
  if (c + 3 < d) { x.w = ldf_k(e + (c + 3) * cs); }
  return x;
}
fn ld4_v(e: i32, c: i32, d: i32, cs: i32) -> vec4<f32> {
  var x = vec4<f32>(0.0);
  if (c < d) { x.x = ldf_v(e + c * cs); }
  if (c + 1 < d) { x.y = ldf_v(e + (c + 1) * cs); }
  if (c + 2 < d) { x.z = ldf_v(e + (c + 2) * cs); }
  if (c + 3 < d) { x.w = ldf_v(e + (c + 3) * cs); }
  return x;
}
//@part ld4_dout
fn ld4_dout(e: i32, c: i32, d: i32, cs: i32) -> vec4<f32> {
  var x = vec4<f32>(0.0);
  if (c < d) { x.x = ldf_dout(e + c * cs); }
  if (c + 1 < d) { x.y = ldf_dout(e + (c + 1) * cs); }
  if (c + 2 < d) { x.z = ldf_dout(e + (c + 2) * cs); }
  if (c + 3 < d) { x.w = ldf_dout(e + (c + 3) * cs); }
  return x;
}
//@part load_kv
// K and V rows [j0, j0 + n) of bh into ks / vs (zero past n and past d / dv).
var<workgroup> ks: array<vec4<f32>, {{KS}}>;
var<workgroup> vs: array<vec4<f32>, {{VS}}>;
fn load_kv(bh: i32, j0: i32, n: i32, lid: i32) {
  let d = P[4];
  let dv = P[5];
  for (var t = lid; t < BC * D4; t = t + WG) {
    let r = t / D4;
    let c = (t % D4) * 4;
    var x = vec4<f32>(0.0);
    if (r < n) { x = ld4_k(at(14, bh, j0 + r, 0), c, d, P[18]); }
    ks[t] = x;
  }
  for (var t = lid; t < BC * DV4; t = t + WG) {
    let r = t / DV4;
    let c = (t % DV4) * 4;
    var x = vec4<f32>(0.0);
    if (r < n) { x = ld4_v(at(19, bh, j0 + r, 0), c, dv, P[23]); }
    vs[t] = x;
  }
}
//@kernel flash_forward
// out = softmax(scale q k^T) v per row, lse = the row's log-sum-exp (-inf and a zero row where
// nothing is visible). Workgroups take the row blocks last to first: under a causal mask the
// last blocks see the most keys, so the heaviest work starts first.
//@use layout
//@use ld4_qkv
//@use load_kv
fn st4_out(e: i32, c: i32, d: i32, cs: i32, x: vec4<f32>) {
  if (c < d) { stf_out(e + c * cs, x.x); }
  if (c + 1 < d) { stf_out(e + (c + 1) * cs, x.y); }
  if (c + 2 < d) { stf_out(e + (c + 2) * cs, x.z); }
  if (c + 3 < d) { stf_out(e + (c + 3) * cs, x.w); }
}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lidu: u32) {
  let blocks = P[8];
  let blk = i32(wid.y * nw.x + wid.x);
  if (blk >= P[0] * blocks) { return; }
  let lid = i32(lidu);
  let bh = blk % P[0];
  let i0 = (blocks - 1 - blk / P[0]) * WG;
  let i = i0 + lid;
  let L = P[2];
  let S = P[3];
  let d = P[4];
  let dv = P[5];
  let causal = P[6] == 1;
  let live = i < L;
  var q: array<vec4<f32>, D4>;
  var o: array<vec4<f32>, DV4>;
  var s: array<f32, BC>;
  if (live) {
    // q scaled once, so a score is one dot product.
    let sc = pf(7);
    let e = at(9, bh, i, 0);
    let cs = P[13];
    {{LOAD_Q}}
  }
  var m = neg_inf();
  var l = 0.0;
  var key_end = S;
  if (causal) { key_end = min(S, i0 + WG); }
  for (var j0 = 0; j0 < key_end; j0 = j0 + BC) {
    let n = min(BC, key_end - j0);
    workgroupBarrier();
    load_kv(bh, j0, n, lid);
    workgroupBarrier();
    // The key loops run over the whole tile in every invocation (a causal mask zeroes p
    // instead of shortening the loop): the tile index stays uniform, so a driver reads each
    // ks / vs element once for the workgroup rather than once per invocation.
    var nv = n;
    if (causal) { nv = clamp(i + 1 - j0, 0, n); }
    var bmax = neg_inf();
    for (var j = 0; j < n; j = j + 1) {
      let jb = j * D4;
      var acc = vec4<f32>(0.0);
      {{DOT_Q_KS}}
      let x = select(neg_inf(), (acc.x + acc.y) + (acc.z + acc.w), j < nv);
      s[j] = x;
      bmax = f_max(bmax, x);  // NaN-propagating: a NaN score makes the row NaN, as on the CPU
    }
    let nm = f_max(m, bmax);
    // Nothing finite seen yet (or a row past L): p stays 0 and the row untouched.
    let dead = nm == neg_inf() || !live;
    var rescale = 0.0;
    if (m != neg_inf() && !dead) { rescale = exp(m - nm); }
    if (!dead) {
      l = l * rescale;
      {{SCALE_O}}
    }
    for (var j = 0; j < n; j = j + 1) {
      let p = select(exp(s[j] - nm), 0.0, dead || j >= nv);
      l = l + p;
      let pv = vec4<f32>(p);
      let jv = j * DV4;
      {{AXPY_O}}
    }
    if (!dead) { m = nm; }
  }
  if (live) {
    var inv = 0.0;
    if (l > 0.0) { inv = 1.0 / l; }
    let e = at(24, bh, i, 0);
    let cs = P[28];
    {{STORE_OUT}}
    var lse = neg_inf();
    if (l > 0.0) { lse = m + log(l); }
    stf_lse(at(29, bh, i, 0), lse);
  }
}
//@kernel flash_backward_dq
// dq_i = scale sum_j p_ij (dp_ij - delta_i) k_j with p_ij = exp(scale q_i k_j - lse_i) and
// dp_ij = dout_i v_j, recomputed over the key tiles the row sees.
//@use layout
//@use ld4_qkv
//@use ld4_dout
//@use load_kv
fn st4_dq(e: i32, c: i32, d: i32, cs: i32, x: vec4<f32>) {
  if (c < d) { stf_dq(e + c * cs, x.x); }
  if (c + 1 < d) { stf_dq(e + (c + 1) * cs, x.y); }
  if (c + 2 < d) { stf_dq(e + (c + 2) * cs, x.z); }
  if (c + 3 < d) { stf_dq(e + (c + 3) * cs, x.w); }
}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lidu: u32) {
  let blocks = P[8];
  let blk = i32(wid.y * nw.x + wid.x);
  if (blk >= P[0] * blocks) { return; }
  let lid = i32(lidu);
  let bh = blk % P[0];
  let i0 = (blocks - 1 - blk / P[0]) * WG;
  let i = i0 + lid;
  let L = P[2];
  let S = P[3];
  let d = P[4];
  let dv = P[5];
  let causal = P[6] == 1;
  let sc = pf(7);
  var q: array<vec4<f32>, D4>;
  var g: array<vec4<f32>, DV4>;
  var dq: array<vec4<f32>, D4>;
  var lse = neg_inf();
  var delta = 0.0;
  if (i < L) {
    lse = ldf_lse(at(29, bh, i, 0));
    delta = ldf_delta(at(34, bh, i, 0));
    let e = at(9, bh, i, 0);
    let cs = P[13];
    {{LOAD_Q}}
    let eg = at(24, bh, i, 0);
    let cg = P[28];
    {{LOAD_G}}
  }
  // A row with nothing visible (lse = -inf) has p = 0 throughout.
  let live = i < L && lse != neg_inf();
  var key_end = S;
  if (causal) { key_end = min(S, i0 + WG); }
  for (var j0 = 0; j0 < key_end; j0 = j0 + BC) {
    let n = min(BC, key_end - j0);
    workgroupBarrier();
    load_kv(bh, j0, n, lid);
    workgroupBarrier();
    // Uniform key loop, masked p (see flash_forward).
    var nv = n;
    if (causal) { nv = clamp(i + 1 - j0, 0, n); }
    if (!live) { nv = 0; }
    for (var j = 0; j < n; j = j + 1) {
      let jb = j * D4;
      let jv = j * DV4;
      var acc = vec4<f32>(0.0);
      {{DOT_Q_KS}}
      let p = select(0.0, exp((acc.x + acc.y) + (acc.z + acc.w) - lse), j < nv);
      var b = vec4<f32>(0.0);
      {{DOT_G_VS}}
      let dsv = vec4<f32>(p * ((b.x + b.y) + (b.z + b.w) - delta));
      {{AXPY_DQ}}
    }
  }
  if (i < L) {
    let e = at(39, bh, i, 0);
    let cs = P[43];
    {{STORE_DQ}}
  }
}
//@kernel flash_backward_dkdv
// dv_j = sum_i p_ij dout_i and dk_j = scale sum_i p_ij (dp_ij - delta_i) q_i, one invocation per
// key row; the query rows (with their lse and delta) stream through workgroup memory. Under a
// causal mask rows before the workgroup's first key see none of its keys and are skipped.
//@use layout
//@use ld4_qkv
//@use ld4_dout
var<workgroup> qs: array<vec4<f32>, {{KS}}>;
var<workgroup> gs: array<vec4<f32>, {{VS}}>;
var<workgroup> ls: array<f32, BC>;
var<workgroup> dls: array<f32, BC>;
fn st4_dk(e: i32, c: i32, d: i32, cs: i32, x: vec4<f32>) {
  if (c < d) { stf_dk(e + c * cs, x.x); }
  if (c + 1 < d) { stf_dk(e + (c + 1) * cs, x.y); }
  if (c + 2 < d) { stf_dk(e + (c + 2) * cs, x.z); }
  if (c + 3 < d) { stf_dk(e + (c + 3) * cs, x.w); }
}
fn st4_dv(e: i32, c: i32, d: i32, cs: i32, x: vec4<f32>) {
  if (c < d) { stf_dv(e + c * cs, x.x); }
  if (c + 1 < d) { stf_dv(e + (c + 1) * cs, x.y); }
  if (c + 2 < d) { stf_dv(e + (c + 2) * cs, x.z); }
  if (c + 3 < d) { stf_dv(e + (c + 3) * cs, x.w); }
}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lidu: u32) {
  let blocks = P[8];
  let blk = i32(wid.y * nw.x + wid.x);
  if (blk >= P[0] * blocks) { return; }
  let lid = i32(lidu);
  let bh = blk % P[0];
  let j0 = (blk / P[0]) * WG;
  let j = j0 + lid;
  let L = P[2];
  let S = P[3];
  let d = P[4];
  let dv = P[5];
  let causal = P[6] == 1;
  let sc = pf(7);
  var k: array<vec4<f32>, D4>;
  var v: array<vec4<f32>, DV4>;
  var dk: array<vec4<f32>, D4>;
  var dvv: array<vec4<f32>, DV4>;
  let live = j < S;
  if (live) {
    let e = at(14, bh, j, 0);
    let cs = P[18];
    {{LOAD_K}}
    let ev = at(19, bh, j, 0);
    let cv = P[23];
    {{LOAD_V}}
  }
  var row0 = 0;
  if (causal) { row0 = j0; }
  for (var i0 = row0; i0 < L; i0 = i0 + BC) {
    let n = min(BC, L - i0);
    workgroupBarrier();
    for (var t = lid; t < BC * D4; t = t + WG) {
      let r = t / D4;
      var x = vec4<f32>(0.0);
      if (r < n) { x = ld4_q(at(9, bh, i0 + r, 0), (t % D4) * 4, d, P[13]); }
      qs[t] = x;
    }
    for (var t = lid; t < BC * DV4; t = t + WG) {
      let r = t / DV4;
      var x = vec4<f32>(0.0);
      if (r < n) { x = ld4_dout(at(24, bh, i0 + r, 0), (t % DV4) * 4, dv, P[28]); }
      gs[t] = x;
    }
    for (var t = lid; t < BC; t = t + WG) {
      var lv = neg_inf();
      var dl = 0.0;
      if (t < n) {
        lv = ldf_lse(at(29, bh, i0 + t, 0));
        dl = ldf_delta(at(34, bh, i0 + t, 0));
      }
      ls[t] = lv;
      dls[t] = dl;
    }
    workgroupBarrier();
    // Uniform row loop, masked p (see flash_forward). Causal: row i sees key j when i >= j, so
    // this tile's rows from j - i0 on; a row with nothing visible (lse = -inf) has p = 0.
    var r0 = 0;
    if (causal) { r0 = clamp(j - i0, 0, n); }
    if (!live) { r0 = n; }
    for (var r = 0; r < n; r = r + 1) {
      let lse = ls[r];
      let rb = r * D4;
      let rv = r * DV4;
      var acc = vec4<f32>(0.0);
      {{DOT_K_QS}}
      let p = select(0.0, exp((acc.x + acc.y) + (acc.z + acc.w) - lse), r >= r0 && lse != neg_inf());
      let pv = vec4<f32>(p);
      var b = vec4<f32>(0.0);
      {{DOT_V_GS_AXPY_DV}}
      let dsv = vec4<f32>(p * ((b.x + b.y) + (b.z + b.w) - dls[r]));
      {{AXPY_DK}}
    }
  }
  if (live) {
    let e = at(44, bh, j, 0);
    let cs = P[48];
    {{STORE_DK}}
    let ev = at(49, bh, j, 0);
    let cv = P[53];
    {{STORE_DV}}
  }
}
