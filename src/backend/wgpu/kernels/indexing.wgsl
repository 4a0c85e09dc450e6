// Indexing kernels over contiguous operands seen as (outer, n, inner) blocks around one dim;
// index tensors are int64 (their low words are read: values were range-checked by the op
// layer). {{MOVE(dst, src)}} moves one element of the data dtype (both words of an int64).
//@kernel gather
// P = [outer * k * inner, n, k, inner, x off, index off, out off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let inner = P[3];
  let i = t % inner;
  let o = t / (P[2] * inner);
  let src = P[4] + (o * P[1] + ldi_index(P[5] + t)) * inner + i;
  let dst = P[6] + t;
  {{MOVE}}
}
//@kernel index_select
// P = [outer * k * inner, n, k, inner, x off, index off, out off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let inner = P[3];
  let i = t % inner;
  let j = (t / inner) % P[2];
  let o = t / (P[2] * inner);
  let src = P[4] + (o * P[1] + ldi_index(P[5] + j)) * inner + i;
  let dst = P[6] + t;
  {{MOVE}}
}
//@kernel scatter_add
// P = [outer * inner, n, k, inner, out off, index off, src off]. One invocation per (o, i)
// line adds its k sources in order: lines never share an output element, so no atomics are
// needed and the sums are deterministic.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let line = linear_id(wid, nw, lid, 256u);
  if (line >= P[0]) { return; }
  let inner = P[3];
  let i = line % inner;
  let o = line / inner;
  for (var j = 0; j < P[2]; j = j + 1) {
    let s = (o * P[2] + j) * inner + i;
    let d = P[4] + (o * P[1] + ldi_index(P[5] + s)) * inner + i;
    st{{D}}_out(d, ld{{D}}_out(d) + ld{{D}}_src(P[6] + s));
  }
}
//@kernel scatter_add_atomic
// Few lines with many sources each: one invocation per source element (outer * k * inner) adds
// into out (float32: compare-exchange loop on the word; int32: atomicAdd). P as scatter_add;
// out is bound after index and src.
@group(0) @binding(3) var<storage, read_write> AO: array<atomic<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  let inner = P[3];
  let k = P[2];
  if (t >= P[0] * k) { return; }
  let i = t % inner;
  let j = (t / inner) % k;
  let o = t / (inner * k);
  let s = (o * k + j) * inner + i;
  let d = P[4] + (o * P[1] + ldi_index(P[5] + s)) * inner + i;
  if ({{ISF}}) {
    let v = ldf_src(P[6] + s);
    var old = atomicLoad(&AO[d]);
    loop {
      let r = atomicCompareExchangeWeak(&AO[d], old, bitcast<u32>(bitcast<f32>(old) + v));
      if (r.exchanged) { break; }
      old = r.old_value;
    }
  } else {
    atomicAdd(&AO[d], bitcast<u32>(ldi_src(P[6] + s)));
  }
}
//@kernel cat_part
// P = [outer * w, w, row, col, x off, out off]: input (outer, w) into columns [col, col + w) of out (outer, row)
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let w = P[1];
  let src = P[4] + t;
  let dst = P[5] + (t / w) * P[2] + P[3] + t % w;
  {{MOVE}}
}
//@kernel triangle
// P = [batch * rows * cols, rows, cols, diagonal, upper, x off, out off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let c = t % P[2];
  let r = (t / P[2]) % P[1];
  let keep = select(c - r <= P[3], c - r >= P[3], P[4] == 1);
  let src = P[5] + t;
  let dst = P[6] + t;
  if (keep) {
    {{MOVE}}
  } else {
    {{ZERO}}
  }
}
