// Elementwise kernels over N-d strided operands (broadcast views have stride 0): binary,
// unary, copy (with dtype conversion), fill and where. {{EXPR}} is the op in the {{D}}
// domain (f (f32) or i (i32)); operands are loaded in it and stored converting to their dtype.
// ix(i, k) is the element index of element i of operand k: {{IX}} is `strided(i, k)` in
// general and `P[3 + 2 * k] + i` (offset plus i, no index arithmetic) when every operand is
// contiguous in the output's shape. Each invocation handles {{EPT}} elements, 256 apart, so a
// workgroup covers 256 * {{EPT}} consecutive elements with coalesced accesses.
//@kernel binary
fn ix(i: i32, k: i32) -> i32 { {{IX}} }
fn one(i: i32) {
  let a = ld{{D}}_a(ix(i, 0));
  let b = ld{{D}}_b(ix(i, 1));
  st{{O}}_out(ix(i, 2), {{EXPR}});
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * nw.x + wid.x) * ({{EPT}}u * 256u) + lid;
  for (var e = 0u; e < {{EPT}}u; e = e + 1u) {
    let i = i32(g + e * 256u);
    if (i < P[0]) { one(i); }
  }
}
//@kernel unary
fn ix(i: i32, k: i32) -> i32 { {{IX}} }
fn one(i: i32) {
  let p0 = pf({{PX}});
  let p1 = pf({{PX}} + 1);
  let v = ld{{D}}_x(ix(i, 0));
  st{{O}}_out(ix(i, 1), {{EXPR}});
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * nw.x + wid.x) * ({{EPT}}u * 256u) + lid;
  for (var e = 0u; e < {{EPT}}u; e = e + 1u) {
    let i = i32(g + e * 256u);
    if (i < P[0]) { one(i); }
  }
}
//@kernel copy
fn ix(i: i32, k: i32) -> i32 { {{IX}} }
fn one(i: i32) {
  st{{D}}_out(ix(i, 1), ld{{D}}_x(ix(i, 0)));
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * nw.x + wid.x) * ({{EPT}}u * 256u) + lid;
  for (var e = 0u; e < {{EPT}}u; e = e + 1u) {
    let i = i32(g + e * 256u);
    if (i < P[0]) { one(i); }
  }
}
//@kernel fill
fn ix(i: i32, k: i32) -> i32 { {{IX}} }
fn one(i: i32) {
  let px = 2 + P[1] + P[1] + 1;
  if ({{ISF}}) { stf_out(ix(i, 0), pf(px)); } else { sti_out(ix(i, 0), P[px]); }
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * nw.x + wid.x) * ({{EPT}}u * 256u) + lid;
  for (var e = 0u; e < {{EPT}}u; e = e + 1u) {
    let i = i32(g + e * 256u);
    if (i < P[0]) { one(i); }
  }
}
//@kernel where
fn ix(i: i32, k: i32) -> i32 { {{IX}} }
fn one(i: i32) {
  let c = ldi_c(ix(i, 0));
  if (c != 0) {
    st{{D}}_out(ix(i, 3), ld{{D}}_a(ix(i, 1)));
  } else {
    st{{D}}_out(ix(i, 3), ld{{D}}_b(ix(i, 2)));
  }
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * nw.x + wid.x) * ({{EPT}}u * 256u) + lid;
  for (var e = 0u; e < {{EPT}}u; e = e + 1u) {
    let i = i32(g + e * 256u);
    if (i < P[0]) { one(i); }
  }
}
//@kernel copy64
fn ix(i: i32, k: i32) -> i32 { {{IX}} }
fn one(i: i32) {
  let s = ix(i, 0);
  let d = ix(i, 1);
  B_out[2 * d] = B_x[2 * s];
  B_out[2 * d + 1] = B_x[2 * s + 1];
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * nw.x + wid.x) * ({{EPT}}u * 256u) + lid;
  for (var e = 0u; e < {{EPT}}u; e = e + 1u) {
    let i = i32(g + e * 256u);
    if (i < P[0]) { one(i); }
  }
}
//@kernel binary4
// float32 operands and output, every operand fast-indexed and 4-aligned, numel a multiple of 4:
// one vec4 per invocation (P as for binary; ld_a / ld_b load vec4 q of an operand: contiguous,
// broadcast scalar or repeated trailing block).
@group(0) @binding(1) var<storage, read_write> VA: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> VB: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> VO: array<vec4<f32>>;
fn op(a: f32, b: f32) -> f32 { return f32({{EXPR}}); }
fn ld_a(q: i32) -> vec4<f32> { {{LDA}} }
fn ld_b(q: i32) -> vec4<f32> { {{LDB}} }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let q = linear_id(wid, nw, lid, 256u);
  if (q >= (P[0] >> 2u)) { return; }
  let a = ld_a(q);
  let b = ld_b(q);
  VO[(P[7] >> 2u) + q] = vec4<f32>(op(a.x, b.x), op(a.y, b.y), op(a.z, b.z), op(a.w, b.w));
}
//@kernel unary4
// As binary4 for a unary op (P as for unary, {{PX}} its two scalar parameters).
@group(0) @binding(1) var<storage, read_write> VX: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> VO: array<vec4<f32>>;
fn op(v: f32) -> f32 {
  let p0 = pf({{PX}});
  let p1 = pf({{PX}} + 1);
  return f32({{EXPR}});
}
fn ld_x(q: i32) -> vec4<f32> { {{LDX}} }
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let q = linear_id(wid, nw, lid, 256u);
  if (q >= (P[0] >> 2u)) { return; }
  let v = ld_x(q);
  VO[(P[5] >> 2u) + q] = vec4<f32>(op(v.x), op(v.y), op(v.z), op(v.w));
}
//@kernel copy16
// Same-dtype contiguous copy in 16-byte words. P = [words, src word offset, dst word offset].
@group(0) @binding(1) var<storage, read_write> VS: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> VD: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let q = linear_id(wid, nw, lid, 256u);
  if (q >= P[0]) { return; }
  VD[P[2] + q] = VS[P[1] + q];
}
