// Reductions over a contiguous (outer, r, inner) input, in chunks of L along r (a second
// pass reduces the chunks when r is long and the outputs are few). P = [outputs, r, inner,
// C (chunks), L, x offset, out offset, ...]. {{T}} is the domain, comb() the op, load() the
// element as the op sees it.
//@part fold
// What rows and cols_tile share: sh, comb() the op, load() the element; fold() combines
// load(base + j * inner) over j = j0, j0 + step, ... < end, four independent loads per step (then
// the tail) combined pairwise; tree_to() stores each invocation's value in sh and folds sh[lid + s] into sh[lid] for
// s = 128, 64, ... down to `lanes`, leaving sh[0 .. lanes) combined (call it from uniform control).
var<workgroup> sh: array<{{T}}, 256>;
fn comb(a: {{T}}, b: {{T}}) -> {{T}} { return {{COMB}}; }
fn load(k: i32) -> {{T}} { return {{LOAD}}; }
fn fold(acc0: {{T}}, base: i32, j0: i32, end: i32, step: i32, inner: i32) -> {{T}} {
  var acc = acc0;
  var j = j0;
  for (; j + 3 * step < end; j = j + 4 * step) {
    let u = comb(load(base + j * inner), load(base + (j + step) * inner));
    let w = comb(load(base + (j + 2 * step) * inner), load(base + (j + 3 * step) * inner));
    acc = comb(acc, comb(u, w));
  }
  for (; j < end; j = j + step) { acc = comb(acc, load(base + j * inner)); }
  return acc;
}
fn tree_to(acc: {{T}}, lid: u32, lanes: u32) {
  sh[lid] = acc;
  workgroupBarrier();
  for (var s = 128u; s >= lanes; s = s >> 1u) {
    if (lid < s) { sh[lid] = comb(sh[lid], sh[lid + s]); }
    workgroupBarrier();
  }
}
//@kernel rows
//@use fold
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = i32(wid.y * nw.x + wid.x);
  if (g >= P[0]) { return; }
  let r = P[1];
  let inner = P[2];
  let C = P[3];
  let L = P[4];
  let i = g % inner;
  let c = (g / inner) % C;
  let o = g / (inner * C);
  let end = min(r, (c + 1) * L);
  let acc = fold({{ID}}, P[5] + o * r * inner + i, c * L + i32(lid), end, 256, inner);
  tree_to(acc, lid, 1u);
  if (lid == 0u) { st{{O}}_out(P[6] + g, sh[0]); }
}
//@kernel cols
fn comb(a: {{T}}, b: {{T}}) -> {{T}} { return {{COMB}}; }
fn load(k: i32) -> {{T}} { return {{LOAD}}; }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nw, lid, 256u);
  if (g >= P[0]) { return; }
  let r = P[1];
  let inner = P[2];
  let C = P[3];
  let L = P[4];
  let i = g % inner;
  let c = (g / inner) % C;
  let o = g / (inner * C);
  let end = min(r, (c + 1) * L);
  var acc: {{T}} = {{ID}};
  for (var j = c * L; j < end; j = j + 1) { acc = comb(acc, load(P[5] + (o * r + j) * inner + i)); }
  st{{O}}_out(P[6] + g, acc);
}
//@kernel cols_tile
// One pass for a reduced run short enough that a second pass costs more than it saves (a bias
// gradient: r = batch rows): a workgroup per 16 neighbouring outputs of one o, 16 lanes along r
// for each (fold), then a tree over the lanes. P = [outputs, r,
// inner, 1, r, x offset, out offset, outer].
//@use fold
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = i32(wid.y * nw.x + wid.x);
  let r = P[1];
  let inner = P[2];
  let tiles = (inner + 15) / 16;
  let o = wg / tiles;
  let i = (wg % tiles) * 16 + i32(lid % 16u);
  let live = o < P[7] && i < inner;
  var acc: {{T}} = {{ID}};
  if (live) { acc = fold(acc, P[5] + o * r * inner + i, i32(lid / 16u), r, 16, inner); }
  tree_to(acc, lid, 16u);
  if (lid < 16u && live) { st{{O}}_out(P[6] + o * inner + i, sh[lid]); }
}
//@kernel arg
// P = [outputs, r, inner, is_max, x offset, values offset, indices offset]. First occurrence
// wins ties; a NaN beats every number (the first NaN).
var<workgroup> sv: array<{{T}}, 256>;
var<workgroup> si: array<i32, 256>;
fn nanq(v: {{T}}) -> bool { return {{NANQ}}; }
fn better(av: {{T}}, ai: i32, bv: {{T}}, bi: i32) -> bool {  // is (a) preferred over (b)?
  if (bi < 0) { return ai >= 0; }
  if (ai < 0) { return false; }
  let an = nanq(av);
  let bn = nanq(bv);
  if (an || bn) { return an && (!bn || ai < bi); }
  if (av == bv) { return ai < bi; }
  return select((av < bv), (av > bv), P[3] == 1);
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = i32(wid.y * nw.x + wid.x);
  if (g >= P[0]) { return; }
  let r = P[1];
  let inner = P[2];
  let i = g % inner;
  let o = g / inner;
  var bv: {{T}} = ld{{D}}_x(P[4] + o * r * inner + i);
  var bi = -1;
  for (var j = i32(lid); j < r; j = j + 256) {
    let v = ld{{D}}_x(P[4] + (o * r + j) * inner + i);
    if (better(v, j, bv, bi)) { bv = v; bi = j; }
  }
  sv[lid] = bv;
  si[lid] = bi;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s && better(sv[lid + s], si[lid + s], sv[lid], si[lid])) { sv[lid] = sv[lid + s]; si[lid] = si[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    st{{D}}_values(P[5] + g, sv[0]);
    sti_indices(P[6] + g, si[0]);
  }
}
//@kernel cumsum
// P = [outer * inner, n, inner, x offset, out offset]: one invocation per (o, i) line.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nw, lid, 256u);
  if (g >= P[0]) { return; }
  let n = P[1];
  let inner = P[2];
  let base = (g / inner) * n * inner + g % inner;
  var acc: {{T}} = {{T}}(0);
  for (var j = 0; j < n; j = j + 1) {
    acc = acc + ld{{D}}_x(P[3] + base + j * inner);
    st{{D}}_out(P[4] + base + j * inner, acc);
  }
}
//@kernel scan
// P = [outer * inner, n, inner, x offset, out offset, indices offset]: one invocation per (o, i) line.
// The STEP substitution folds v (element j) into acc (and the extreme's index `at`); the STORE_INDEX
// ones write `at` for cummax/cummin (empty otherwise). Rules of src/backend/scan_step.h.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nw, lid, 256u);
  if (g >= P[0]) { return; }
  let n = P[1];
  let inner = P[2];
  let base = (g / inner) * n * inner + g % inner;
  var acc: {{T}} = ld{{D}}_x(P[3] + base);
  var at = 0;
  st{{D}}_out(P[4] + base, acc);
  {{STORE_INDEX}}
  for (var j = 1; j < n; j = j + 1) {
    let k = base + j * inner;
    let v = ld{{D}}_x(P[3] + k);
    {{STEP}}
    st{{D}}_out(P[4] + k, acc);
    {{STORE_INDEX_K}}
  }
}
