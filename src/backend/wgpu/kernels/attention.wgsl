// Tiled (flash) attention: softmax(scale q k^T [+ additive mask] [+ causal mask]) [dropped] v with
// an online softmax over key tiles, so no (L, S) buffer exists; the forward keeps each row's
// log-sum-exp and the backward recomputes the probabilities (and the dropout mask) tile by tile
// from it (FlashAttention-2's recurrence). One invocation owns one query row (forward, dq) or
// one key row (dk, dv) and keeps it, and its accumulators, in private vec4 arrays; the other
// operand streams through workgroup memory in tiles of BC rows that every invocation of the
// workgroup reads. Causal tiles past a workgroup's last row are never loaded. Every access to a
// private array has a constant index (the {{...}} statements are unrolled by attention.cpp): one
// dynamic index would move the whole array to per-invocation memory (lavapipe: gathers and
// scatters instead of registers).
//
// P = [BH, H, L, S, d, dv, flags, scale bits, blocks, then per operand slot (offset, batch
// stride, head stride, row stride, column stride) in elements]: slots q 9, k 14, v 19, out/dout
// 24, lse 29, delta 34, dq 39, dk 44, dv 49, mask 54 (a kernel reads only the slots it binds);
// then the dropout's seed (lo, hi words) 59, counter (lo, hi) 61, keep threshold bits 63 and
// scale bits 64. flags: 1 causal, 2 an additive mask (bound as `mask`, of the operands' dtype,
// (B, H, L, S) through its strides; without one the binding is q and never read), 4 dropout on
// the probabilities that meet v. The flags are uniform, so the plain path pays a branch per key.
// A workgroup takes one block of WG rows of one (batch, head) pair; `blocks` counts them per pair.
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
fn causal_on() -> bool { return (P[6] & 1) != 0; }
fn masked_on() -> bool { return (P[6] & 2) != 0; }
fn dropout_on() -> bool { return (P[6] & 4) != 0; }
//@part dropout
// DropoutDraw's mask (src/backend/backend.h): element e = (bh L + i) S + j of the (B H, L, S)
// probabilities is kept where the uniform from Philox block (counter + e / 4), lane e % 4, under
// the seed is below the keep threshold, the uniform being the top 24 bits of the word times 2^-24:
// random.wgsl's dropout draw, so a kernel here drops exactly what dropout() on the materialised
// probabilities would. e and the block are 64-bit sums in (lo, hi) words (B H L S may pass 2^32).
fn drop_elem(bh: i32, i: i32, j: i32) -> vec2<u32> {  // e of (bh, i, j)
  let r = mulhilo(u32(bh * P[2] + i), u32(P[3]));
  let lo = r.y + u32(j);
  return vec2<u32>(lo, r.x + select(0u, 1u, lo < r.y));
}
fn drop_kept(w: u32) -> bool { return f32(w >> 8u) * (1.0 / 16777216.0) < pf(63); }
// Bit t (t < n <= 32) set where element e + t is kept: one Philox block per four elements.
fn keep_bits(e: vec2<u32>, n: i32) -> u32 {
  if (n <= 0) { return 0u; }
  let lane0 = i32(e.x & 3u);
  let blo = (e.x >> 2u) | (e.y << 30u);
  let clo = u32(P[61]) + blo;
  var ctr = vec2<u32>(clo, u32(P[62]) + (e.y >> 2u) + select(0u, 1u, clo < blo));
  let key = vec2<u32>(u32(P[59]), u32(P[60]));
  var bits = 0u;
  for (var t = -lane0; t < n; t = t + 4) {  // t: element of the block's first lane, relative to e
    let w = philox4x32(ctr, key);
    if (t >= 0 && drop_kept(w.x)) { bits = bits | (1u << u32(t)); }
    if (t + 1 >= 0 && t + 1 < n && drop_kept(w.y)) { bits = bits | (1u << u32(t + 1)); }
    if (t + 2 >= 0 && t + 2 < n && drop_kept(w.z)) { bits = bits | (1u << u32(t + 2)); }
    if (t + 3 >= 0 && t + 3 < n && drop_kept(w.w)) { bits = bits | (1u << u32(t + 3)); }
    ctr.x = ctr.x + 1u;
    if (ctr.x == 0u) { ctr.y = ctr.y + 1u; }
  }
  return bits;
}
// The dropout factor (scale or 0) of key j of a tile from its keep bits (j < 64 = 2 words).
fn drop_factor(b0: u32, b1: u32, j: i32) -> f32 {
  let b = select(b1, b0, j < 32);
  return select(0.0, pf(64), ((b >> u32(j & 31)) & 1u) != 0u);
}
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
// out = softmax(scale q k^T [+ mask]) [dropped] v per row, lse = the row's log-sum-exp of the
// undropped softmax (-inf and a zero row where nothing is visible). Workgroups take the row
// blocks last to first: under a causal mask the last blocks see the most keys, so the heaviest
// work starts first.
//@use layout
//@use ld4_qkv
//@use load_kv
//@use dropout
//@use random/philox
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
  let causal = causal_on();
  let masked = masked_on();
  let dropping = dropout_on();
  let live = i < L;
  // The mask's row (row L - 1 stands in for rows past L, whose results are not stored).
  let mrow = at(54, bh, min(i, L - 1), 0);
  let mcs = P[58];
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
    var kb0 = 0u;
    var kb1 = 0u;
    if (dropping && live) {
      kb0 = keep_bits(drop_elem(bh, i, j0), min(n, 32));
      kb1 = keep_bits(drop_elem(bh, i, j0 + 32), n - 32);
    }
    var bmax = neg_inf();
    for (var j = 0; j < n; j = j + 1) {
      let jb = j * D4;
      var acc = vec4<f32>(0.0);
      {{DOT_Q_KS}}
      var x = (acc.x + acc.y) + (acc.z + acc.w);
      if (masked) { x = x + ldf_mask(mrow + (j0 + j) * mcs); }
      x = select(neg_inf(), x, j < nv);
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
      l = l + p;  // the undropped softmax's sum; only what meets v is dropped
      var f = 1.0;
      if (dropping) { f = drop_factor(kb0, kb1, j); }
      let pv = vec4<f32>(p * f);
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
// dq_i = scale sum_j p_ij (dp_ij - delta_i) k_j with p_ij = exp(scale q_i k_j [+ mask_ij] - lse_i)
// and dp_ij = f_ij dout_i v_j (f the dropout factor, 1 without dropout), recomputed over the key
// tiles the row sees.
//@use layout
//@use ld4_qkv
//@use ld4_dout
//@use load_kv
//@use dropout
//@use random/philox
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
  let causal = causal_on();
  let masked = masked_on();
  let dropping = dropout_on();
  let sc = pf(7);
  let mrow = at(54, bh, min(i, L - 1), 0);
  let mcs = P[58];
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
    var kb0 = 0u;
    var kb1 = 0u;
    if (dropping && live) {
      kb0 = keep_bits(drop_elem(bh, i, j0), min(n, 32));
      kb1 = keep_bits(drop_elem(bh, i, j0 + 32), n - 32);
    }
    for (var j = 0; j < n; j = j + 1) {
      let jb = j * D4;
      let jv = j * DV4;
      var acc = vec4<f32>(0.0);
      {{DOT_Q_KS}}
      var x = (acc.x + acc.y) + (acc.z + acc.w);
      if (masked) { x = x + ldf_mask(mrow + (j0 + j) * mcs); }
      let p = select(0.0, exp(x - lse), j < nv);
      var b = vec4<f32>(0.0);
      {{DOT_G_VS}}
      var f = 1.0;
      if (dropping) { f = drop_factor(kb0, kb1, j); }
      let dsv = vec4<f32>(p * (((b.x + b.y) + (b.z + b.w)) * f - delta));
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
// dv_j = sum_i f_ij p_ij dout_i and dk_j = scale sum_i p_ij (dp_ij - delta_i) q_i with
// dp_ij = f_ij dout_i v_j (f the dropout factor, 1 without dropout), one invocation per key row;
// the query rows (with their lse, delta and, with dropout, the keep bits of the workgroup's 64
// keys, drawn by the workgroup together: four neighbouring keys share a Philox block) stream
// through workgroup memory. Under a causal mask rows before the workgroup's first key see none
// of its keys and are skipped.
//@use layout
//@use ld4_qkv
//@use ld4_dout
//@use dropout
//@use random/philox
var<workgroup> qs: array<vec4<f32>, {{KS}}>;
var<workgroup> gs: array<vec4<f32>, {{VS}}>;
var<workgroup> ls: array<f32, BC>;
var<workgroup> dls: array<f32, BC>;
var<workgroup> kbits: array<u32, 2 * BC>;  // per tile row: keep bits of keys j0.., j0 + 32..
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
  let causal = causal_on();
  let masked = masked_on();
  let dropping = dropout_on();
  let sc = pf(7);
  // The mask's column j (column S - 1 stands in for keys past S, whose results are not stored).
  let mcol = at(54, bh, 0, min(j, S - 1));
  let mrs = P[57];
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
    if (dropping) {
      for (var t = lid; t < 2 * BC; t = t + WG) {
        let r = t / 2;
        let c = j0 + (t % 2) * 32;
        var bits = 0u;
        if (r < n) { bits = keep_bits(drop_elem(bh, i0 + r, c), min(32, S - c)); }
        kbits[t] = bits;
      }
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
      var x = (acc.x + acc.y) + (acc.z + acc.w);
      if (masked) { x = x + ldf_mask(mcol + (i0 + r) * mrs); }
      let p = select(0.0, exp(x - lse), r >= r0 && lse != neg_inf());
      var f = 1.0;
      if (dropping) { f = select(0.0, pf(64), ((kbits[2 * r + lid / 32] >> u32(lid & 31)) & 1u) != 0u); }
      let pv = vec4<f32>(p * f);
      var b = vec4<f32>(0.0);
      {{DOT_V_GS_AXPY_DV}}
      let dsv = vec4<f32>(p * (((b.x + b.y) + (b.z + b.w)) * f - dls[r]));
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
