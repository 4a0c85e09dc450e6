// Sorting (bitonic; int64 keys by rank) and stream compaction. In rank_sort {{LESS}}(a, b) /
// {{EQ}}(a, b) compare the elements at element indices a and b of x (NaN is the largest
// float); {{MOVE}} moves element src of x to element dst of the output.
//@kernel rank_sort
// P = [outer * n * inner, n, inner, k, descending, x off, values off, indices off]. Each element
// counts the elements that precede it in a stable sort of its line (O(n) per element, all
// elements in parallel) and, when its rank is below k, writes itself there.
fn less(a: i32, b: i32) -> bool { return {{LESS}}; }
fn same(a: i32, b: i32) -> bool { return {{EQ}}; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let n = P[1];
  let inner = P[2];
  let i = t % inner;
  let j = (t / inner) % n;
  let o = t / (n * inner);
  let base = P[5] + o * n * inner + i;
  let me = base + j * inner;
  let desc = P[4] == 1;
  var rank = 0;
  for (var m = 0; m < n; m = m + 1) {
    let other = base + m * inner;
    var before: bool;
    if (desc) { before = less(me, other); } else { before = less(other, me); }
    if (before || (m < j && same(other, me))) { rank = rank + 1; }
  }
  if (rank < P[3]) {
    let dst = P[6] + (o * P[3] + rank) * inner + i;
    let src = me;
    {{MOVE}}
    sti_indices(P[7] + (o * P[3] + rank) * inner + i, j);
  }
}
//@kernel bitonic_init
// Bitonic sort of lines (float32/int32-domain keys), scratch kv (keys) and ki (indices within the
// line), P2 (a power of two >= n) slots per line; padding slots have index -1 and sort last.
// P = [lines * P2, n, inner, P2, x off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let n = P[1];
  let inner = P[2];
  let line = t / P[3];
  let e = t % P[3];
  if (e < n) {
    st{{D}}_kv(t, ld{{D}}_x(P[4] + ((line / inner) * n + e) * inner + line % inner));
    sti_ki(t, e);
  } else {
    st{{D}}_kv(t, {{T}}(0));
    sti_ki(t, -1);
  }
}
//@kernel bitonic_chunk
// The network's steps that stay inside chunks of CH slots, in workgroup memory: stages kk from
// P[3] to P[4] (doubling), steps j from P[5] (first stage) or kk / 2 down to 1. Direction by
// the slot's position in its line. {{BEFORE}}: whether (av, ai) sorts before (bv, bi) (stable:
// equal keys by index; NaN the largest float). P = [chunks, P2, CH, kk0, kk1, j0]
var<workgroup> sv: array<{{T}}, 2048>;
var<workgroup> si: array<i32, 2048>;
fn before(av: {{T}}, ai: i32, bv: {{T}}, bi: i32) -> bool { {{BEFORE}} }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let c = i32(wid.y * nw.x + wid.x);
  if (c >= P[0]) { return; }
  let CH = P[2];
  let base = c * CH;
  let pos0 = base % P[1];  // the chunk's first slot within its line
  for (var e = i32(lid); e < CH; e = e + 256) {
    sv[e] = ld{{D}}_kv(base + e);
    si[e] = ldi_ki(base + e);
  }
  workgroupBarrier();
  for (var kk = P[3]; kk <= P[4]; kk = kk << 1u) {
    var j = kk >> 1u;
    if (kk == P[3]) { j = P[5]; }
    for (; j > 0; j = j >> 1u) {
      for (var t = i32(lid); t < CH / 2; t = t + 256) {
        let a = 2 * t - (t & (j - 1));
        let b = a + j;
        let up = ((pos0 + a) & kk) == 0;
        let av = sv[a];
        let ai = si[a];
        let bv = sv[b];
        let bi = si[b];
        if (select(before(av, ai, bv, bi), before(bv, bi, av, ai), up)) {
          sv[a] = bv;
          si[a] = bi;
          sv[b] = av;
          si[b] = ai;
        }
      }
      workgroupBarrier();
    }
  }
  for (var e = i32(lid); e < CH; e = e + 256) {
    st{{D}}_kv(base + e, sv[e]);
    sti_ki(base + e, si[e]);
  }
}
//@kernel bitonic_step
// One step (kk, j) of the network across chunks, in global memory. P = [lines * P2 / 2, P2, kk, j]
fn before(av: {{T}}, ai: i32, bv: {{T}}, bi: i32) -> bool { {{BEFORE}} }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let half = P[1] / 2;
  let line = t / half;
  let u = t % half;
  let j = P[3];
  let a = 2 * u - (u & (j - 1));
  let up = (a & P[2]) == 0;
  let ga = line * P[1] + a;
  let gb = ga + j;
  let av = ld{{D}}_kv(ga);
  let ai = ldi_ki(ga);
  let bv = ld{{D}}_kv(gb);
  let bi = ldi_ki(gb);
  if (select(before(av, ai, bv, bi), before(bv, bi, av, ai), up)) {
    st{{D}}_kv(ga, bv);
    sti_ki(ga, bi);
    st{{D}}_kv(gb, av);
    sti_ki(gb, ai);
  }
}
//@kernel bitonic_emit
// The first min(n, k) sorted slots of each line to values / indices.
// P = [lines * kc, kc, n, inner, k, P2, x off, values off, indices off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let line = t / P[1];
  let e = t % P[1];
  let inner = P[3];
  let o = line / inner;
  let i = line % inner;
  let r = ldi_ki(line * P[5] + e);
  let src = P[6] + (o * P[2] + r) * inner + i;
  let dst = P[7] + (o * P[4] + e) * inner + i;
  {{MOVE}}
  sti_indices(P[8] + (o * P[4] + e) * inner + i, r);
}
//@kernel mask_count
// Stream compaction in three passes over blocks of 1024 elements: counts per block, their
// exclusive scan, then each block's elements placed in order. P = [n, mask off, blocks]
var<workgroup> sc: array<i32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let blk = i32(wid.y * nw.x + wid.x);
  if (blk >= P[2]) { return; }
  var cnt = 0;
  for (var e = 0; e < 4; e = e + 1) {
    let g = blk * 1024 + e * 256 + i32(lid);
    if (g < P[0] && ldi_mask(P[1] + g) != 0) { cnt = cnt + 1; }
  }
  sc[lid] = cnt;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s) { sc[lid] = sc[lid] + sc[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { sti_counts(blk, sc[0]); }
}
//@kernel mask_scan
// One workgroup: counts -> exclusive prefix sums in place, 256 at a time. P = [blocks]
var<workgroup> sc: array<i32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
  var carry = 0;
  for (var c = 0; c < P[0]; c = c + 256) {
    let e = c + i32(lid);
    var v = 0;
    if (e < P[0]) { v = ldi_counts(e); }
    sc[lid] = v;
    workgroupBarrier();
    for (var s = 1u; s < 256u; s = s << 1u) {
      var w = sc[lid];
      if (lid >= s) { w = w + sc[lid - s]; }
      workgroupBarrier();
      sc[lid] = w;
      workgroupBarrier();
    }
    if (e < P[0]) { sti_counts(e, carry + sc[lid] - v); }
    carry = carry + sc[255];
    workgroupBarrier();
  }
}
//@kernel mask_place
// P = [n, x off, mask off, out off, blocks]: each invocation takes 4 consecutive elements of its
// block; a scan of the per-invocation counts gives each selected element its place.
var<workgroup> sc: array<i32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let blk = i32(wid.y * nw.x + wid.x);
  if (blk >= P[4]) { return; }
  let g0 = blk * 1024 + i32(lid) * 4;
  var flags: array<bool, 4>;
  var cnt = 0;
  for (var e = 0; e < 4; e = e + 1) {
    let g = g0 + e;
    flags[e] = g < P[0] && ldi_mask(P[2] + g) != 0;
    if (flags[e]) { cnt = cnt + 1; }
  }
  sc[lid] = cnt;
  workgroupBarrier();
  for (var s = 1u; s < 256u; s = s << 1u) {
    var w = sc[lid];
    if (lid >= s) { w = w + sc[lid - s]; }
    workgroupBarrier();
    sc[lid] = w;
    workgroupBarrier();
  }
  var at = ldi_counts(blk) + sc[lid] - cnt;
  for (var e = 0; e < 4; e = e + 1) {
    if (flags[e]) {
      let src = P[1] + g0 + e;
      let dst = P[3] + at;
      {{MOVE}}
      at = at + 1;
    }
  }
}
