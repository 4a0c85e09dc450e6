// Elementwise kernels over N-d strided operands (broadcast views have stride 0): binary,
// unary, copy (with dtype conversion), fill and where. {{EXPR}} is the op in the {{T}}
// domain (f32 or i32); operands are loaded as {{T}} and stored converting to their dtype.
//@kernel binary
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let a = ld{{D}}_a(strided(i, 0));
  let b = ld{{D}}_b(strided(i, 1));
  st{{O}}_out(strided(i, 2), {{EXPR}});
}
//@kernel unary
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let p0 = pf({{PX}});
  let p1 = pf({{PX}} + 1);
  let v = ld{{D}}_x(strided(i, 0));
  st{{O}}_out(strided(i, 1), {{EXPR}});
}
//@kernel copy
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  st{{D}}_out(strided(i, 1), ld{{D}}_x(strided(i, 0)));
}
//@kernel fill
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let px = 2 + P[1] + P[1] + 1;
  if ({{ISF}}) { stf_out(strided(i, 0), pf(px)); } else { sti_out(strided(i, 0), P[px]); }
}
//@kernel where
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let c = ldi_c(strided(i, 0));
  if (c != 0) {
    st{{D}}_out(strided(i, 3), ld{{D}}_a(strided(i, 1)));
  } else {
    st{{D}}_out(strided(i, 3), ld{{D}}_b(strided(i, 2)));
  }
}
//@kernel copy64
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let s = strided(i, 0);
  let d = strided(i, 1);
  B_out[2 * d] = B_x[2 * s];
  B_out[2 * d + 1] = B_x[2 * s + 1];
}
