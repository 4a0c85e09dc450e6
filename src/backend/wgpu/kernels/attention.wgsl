// Tiled (flash) attention: softmax(scale q k^T [+ causal mask]) v with an online softmax over key
// tiles, so no (L, S) buffer exists; the forward keeps each row's log-sum-exp and the backward
// recomputes the probabilities tile by tile from it (FlashAttention-2's recurrence). One
// invocation owns one query row (forward, dq) or one key row (dk, dv) and keeps it, and its
// accumulators, in private vec4 arrays; the other operand streams through workgroup memory in
// tiles of {{BC}} rows that every invocation of the workgroup reads. Causal tiles past a
// workgroup's last row are never loaded.
//
// P = [BH, H, L, S, d, dv, causal, scale bits, blocks, then per operand slot (offset, batch
// stride, head stride, row stride, column stride) in elements]: slots q 9, k 14, v 19, out/dout
// 24, lse 29, delta 34, dq 39, dk 44, dv 49 (a kernel reads only the slots it binds). A workgroup
// takes block `blocks` rows of one (batch, head) pair.
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
    if (r < n) {
      let e = at(14, bh, j0 + r, c);
      let cs = P[18];
      if (c < d) { x.x = ldf_k(e); }
      if (c + 1 < d) { x.y = ldf_k(e + cs); }
      if (c + 2 < d) { x.z = ldf_k(e + 2 * cs); }
      if (c + 3 < d) { x.w = ldf_k(e + 3 * cs); }
    }
    ks[t] = x;
  }
  for (var t = lid; t < BC * DV4; t = t + WG) {
    let r = t / DV4;
    let c = (t % DV4) * 4;
    var x = vec4<f32>(0.0);
    if (r < n) {
      let e = at(19, bh, j0 + r, c);
      let cs = P[23];
      if (c < dv) { x.x = ldf_v(e); }
      if (c + 1 < dv) { x.y = ldf_v(e + cs); }
      if (c + 2 < dv) { x.z = ldf_v(e + 2 * cs); }
      if (c + 3 < dv) { x.w = ldf_v(e + 3 * cs); }
    }
    vs[t] = x;
  }
}
//@kernel flash_forward
// out = softmax(scale q k^T) v per row, lse = the row's log-sum-exp (-inf and a zero row where
// nothing is visible). Workgroups take the row blocks last to first: under a causal mask the
// last blocks see the most keys, so the heaviest work starts first.
//@use layout
//@use load_kv
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
  let causal = P[6] == 1;
  let live = i < L;
  var q: array<vec4<f32>, D4>;
  var o: array<vec4<f32>, DV4>;
  var s: array<f32, BC>;
  for (var c = 0; c < DV4; c = c + 1) { o[c] = vec4<f32>(0.0); }
  if (live) {
    // q scaled once, so a score is one dot product.
    let sc = pf(7);
    let d = P[4];
    let cs = P[13];
    for (var c = 0; c < D4; c = c + 1) {
      var x = vec4<f32>(0.0);
      let e = at(9, bh, i, 4 * c);
      if (4 * c < d) { x.x = ldf_q(e); }
      if (4 * c + 1 < d) { x.y = ldf_q(e + cs); }
      if (4 * c + 2 < d) { x.z = ldf_q(e + 2 * cs); }
      if (4 * c + 3 < d) { x.w = ldf_q(e + 3 * cs); }
      q[c] = sc * x;
    }
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
    if (live) {
      var nv = n;
      if (causal) { nv = clamp(i + 1 - j0, 0, n); }
      var bmax = neg_inf();
      for (var j = 0; j < nv; j = j + 1) {
        var acc = vec4<f32>(0.0);
        for (var c = 0; c < D4; c = c + 1) { acc = fma(q[c], ks[j * D4 + c], acc); }
        let x = (acc.x + acc.y) + (acc.z + acc.w);
        s[j] = x;
        bmax = max(bmax, x);
      }
      let nm = max(m, bmax);
      // Nothing finite seen yet: p stays 0 and the row untouched.
      if (nm != neg_inf()) {
        var rescale = 0.0;
        if (m != neg_inf()) { rescale = exp(m - nm); }
        l = l * rescale;
        for (var c = 0; c < DV4; c = c + 1) { o[c] = o[c] * rescale; }
        for (var j = 0; j < nv; j = j + 1) {
          let p = exp(s[j] - nm);
          l = l + p;
          for (var c = 0; c < DV4; c = c + 1) { o[c] = fma(vec4<f32>(p), vs[j * DV4 + c], o[c]); }
        }
        m = nm;
      }
    }
  }
  if (live) {
    var inv = 0.0;
    if (l > 0.0) { inv = 1.0 / l; }
    let dv = P[5];
    let e = at(24, bh, i, 0);
    let cs = P[28];
    for (var c = 0; c < DV4; c = c + 1) {
      let x = o[c] * inv;
      if (4 * c < dv) { stf_out(e + 4 * c * cs, x.x); }
      if (4 * c + 1 < dv) { stf_out(e + (4 * c + 1) * cs, x.y); }
      if (4 * c + 2 < dv) { stf_out(e + (4 * c + 2) * cs, x.z); }
      if (4 * c + 3 < dv) { stf_out(e + (4 * c + 3) * cs, x.w); }
    }
    var lse = neg_inf();
    if (l > 0.0) { lse = m + log(l); }
    stf_lse(at(29, bh, i, 0), lse);
  }
}
//@kernel flash_backward_dq
// dq_i = scale sum_j p_ij (dp_ij - delta_i) k_j with p_ij = exp(scale q_i k_j - lse_i) and
// dp_ij = dout_i v_j, recomputed over the key tiles the row sees.
//@use layout
//@use load_kv
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
  for (var c = 0; c < D4; c = c + 1) { dq[c] = vec4<f32>(0.0); q[c] = vec4<f32>(0.0); }
  for (var c = 0; c < DV4; c = c + 1) { g[c] = vec4<f32>(0.0); }
  if (i < L) {
    lse = ldf_lse(at(29, bh, i, 0));
    delta = ldf_delta(at(34, bh, i, 0));
    let cq = P[13];
    for (var c = 0; c < D4; c = c + 1) {
      let e = at(9, bh, i, 4 * c);
      if (4 * c < d) { q[c].x = ldf_q(e); }
      if (4 * c + 1 < d) { q[c].y = ldf_q(e + cq); }
      if (4 * c + 2 < d) { q[c].z = ldf_q(e + 2 * cq); }
      if (4 * c + 3 < d) { q[c].w = ldf_q(e + 3 * cq); }
      q[c] = sc * q[c];
    }
    let cg = P[28];
    for (var c = 0; c < DV4; c = c + 1) {
      let e = at(24, bh, i, 4 * c);
      if (4 * c < dv) { g[c].x = ldf_dout(e); }
      if (4 * c + 1 < dv) { g[c].y = ldf_dout(e + cg); }
      if (4 * c + 2 < dv) { g[c].z = ldf_dout(e + 2 * cg); }
      if (4 * c + 3 < dv) { g[c].w = ldf_dout(e + 3 * cg); }
    }
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
    if (live) {
      var nv = n;
      if (causal) { nv = clamp(i + 1 - j0, 0, n); }
      for (var j = 0; j < nv; j = j + 1) {
        var a = vec4<f32>(0.0);
        for (var c = 0; c < D4; c = c + 1) { a = fma(q[c], ks[j * D4 + c], a); }
        let p = exp((a.x + a.y) + (a.z + a.w) - lse);
        var b = vec4<f32>(0.0);
        for (var c = 0; c < DV4; c = c + 1) { b = fma(g[c], vs[j * DV4 + c], b); }
        let ds = p * ((b.x + b.y) + (b.z + b.w) - delta);
        for (var c = 0; c < D4; c = c + 1) { dq[c] = fma(vec4<f32>(ds), ks[j * D4 + c], dq[c]); }
      }
    }
  }
  if (i < L) {
    let e = at(39, bh, i, 0);
    let cs = P[43];
    for (var c = 0; c < D4; c = c + 1) {
      let x = sc * dq[c];
      if (4 * c < d) { stf_dq(e + 4 * c * cs, x.x); }
      if (4 * c + 1 < d) { stf_dq(e + (4 * c + 1) * cs, x.y); }
      if (4 * c + 2 < d) { stf_dq(e + (4 * c + 2) * cs, x.z); }
      if (4 * c + 3 < d) { stf_dq(e + (4 * c + 3) * cs, x.w); }
    }
  }
}
//@kernel flash_backward_dkdv
// dv_j = sum_i p_ij dout_i and dk_j = scale sum_i p_ij (dp_ij - delta_i) q_i, one invocation per
// key row; the query rows (with their lse and delta) stream through workgroup memory. Under a
// causal mask rows before the workgroup's first key see none of its keys and are skipped.
//@use layout
var<workgroup> qs: array<vec4<f32>, {{KS}}>;
var<workgroup> gs: array<vec4<f32>, {{VS}}>;
var<workgroup> ls: array<f32, BC>;
var<workgroup> ds_: array<f32, BC>;
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
  for (var c = 0; c < D4; c = c + 1) { dk[c] = vec4<f32>(0.0); k[c] = vec4<f32>(0.0); }
  for (var c = 0; c < DV4; c = c + 1) { dvv[c] = vec4<f32>(0.0); v[c] = vec4<f32>(0.0); }
  let live = j < S;
  if (live) {
    let ck = P[18];
    for (var c = 0; c < D4; c = c + 1) {
      let e = at(14, bh, j, 4 * c);
      if (4 * c < d) { k[c].x = ldf_k(e); }
      if (4 * c + 1 < d) { k[c].y = ldf_k(e + ck); }
      if (4 * c + 2 < d) { k[c].z = ldf_k(e + 2 * ck); }
      if (4 * c + 3 < d) { k[c].w = ldf_k(e + 3 * ck); }
      k[c] = sc * k[c];
    }
    let cv = P[23];
    for (var c = 0; c < DV4; c = c + 1) {
      let e = at(19, bh, j, 4 * c);
      if (4 * c < dv) { v[c].x = ldf_v(e); }
      if (4 * c + 1 < dv) { v[c].y = ldf_v(e + cv); }
      if (4 * c + 2 < dv) { v[c].z = ldf_v(e + 2 * cv); }
      if (4 * c + 3 < dv) { v[c].w = ldf_v(e + 3 * cv); }
    }
  }
  var row0 = 0;
  if (causal) { row0 = j0; }
  let cq = P[13];
  let cg = P[28];
  for (var i0 = row0; i0 < L; i0 = i0 + BC) {
    let n = min(BC, L - i0);
    workgroupBarrier();
    for (var t = lid; t < BC * D4; t = t + WG) {
      let r = t / D4;
      let c = (t % D4) * 4;
      var x = vec4<f32>(0.0);
      if (r < n) {
        let e = at(9, bh, i0 + r, c);
        if (c < d) { x.x = ldf_q(e); }
        if (c + 1 < d) { x.y = ldf_q(e + cq); }
        if (c + 2 < d) { x.z = ldf_q(e + 2 * cq); }
        if (c + 3 < d) { x.w = ldf_q(e + 3 * cq); }
      }
      qs[t] = x;
    }
    for (var t = lid; t < BC * DV4; t = t + WG) {
      let r = t / DV4;
      let c = (t % DV4) * 4;
      var x = vec4<f32>(0.0);
      if (r < n) {
        let e = at(24, bh, i0 + r, c);
        if (c < dv) { x.x = ldf_dout(e); }
        if (c + 1 < dv) { x.y = ldf_dout(e + cg); }
        if (c + 2 < dv) { x.z = ldf_dout(e + 2 * cg); }
        if (c + 3 < dv) { x.w = ldf_dout(e + 3 * cg); }
      }
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
      ds_[t] = dl;
    }
    workgroupBarrier();
    if (live) {
      // Causal: row i sees key j when i >= j, so this tile's rows from j - i0 on.
      var r0 = 0;
      if (causal) { r0 = clamp(j - i0, 0, n); }
      for (var r = r0; r < n; r = r + 1) {
        let lse = ls[r];
        if (lse == neg_inf()) { continue; }
        var a = vec4<f32>(0.0);
        for (var c = 0; c < D4; c = c + 1) { a = fma(k[c], qs[r * D4 + c], a); }
        let p = exp((a.x + a.y) + (a.z + a.w) - lse);
        var b = vec4<f32>(0.0);
        for (var c = 0; c < DV4; c = c + 1) {
          let gv = gs[r * DV4 + c];
          b = fma(gv, v[c], b);
          dvv[c] = fma(vec4<f32>(p), gv, dvv[c]);
        }
        let ds = p * ((b.x + b.y) + (b.z + b.w) - ds_[r]);
        for (var c = 0; c < D4; c = c + 1) { dk[c] = fma(vec4<f32>(ds), qs[r * D4 + c], dk[c]); }
      }
    }
  }
  if (live) {
    let ek = at(44, bh, j, 0);
    let ck = P[48];
    for (var c = 0; c < D4; c = c + 1) {
      let x = sc * dk[c];
      if (4 * c < d) { stf_dk(ek + 4 * c * ck, x.x); }
      if (4 * c + 1 < d) { stf_dk(ek + (4 * c + 1) * ck, x.y); }
      if (4 * c + 2 < d) { stf_dk(ek + (4 * c + 2) * ck, x.z); }
      if (4 * c + 3 < d) { stf_dk(ek + (4 * c + 3) * ck, x.w); }
    }
    let ev = at(49, bh, j, 0);
    let cv = P[53];
    for (var c = 0; c < DV4; c = c + 1) {
      let x = dvv[c];
      if (4 * c < dv) { stf_dv(ev + 4 * c * cv, x.x); }
      if (4 * c + 1 < dv) { stf_dv(ev + (4 * c + 1) * cv, x.y); }
      if (4 * c + 2 < dv) { stf_dv(ev + (4 * c + 2) * cv, x.z); }
      if (4 * c + 3 < dv) { stf_dv(ev + (4 * c + 3) * cv, x.w); }
    }
  }
}
