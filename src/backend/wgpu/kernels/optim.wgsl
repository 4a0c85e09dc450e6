// Fused optimizer updates over contiguous float32 param/grad/state tensors.
//@kernel adam
// P = [n, flags (1 amsgrad, 2 maximize, 4 decoupled, 8 weight decay), offsets p g m v vmax,
//      then bits of 1-beta1, beta2, 1-beta2, weight decay, decay, eps, -step size, sqrt(bias correction 2)]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let fl = P[1];
  var g = ldf_g(P[3] + i);
  if ((fl & 2) != 0) { g = -g; }
  var p = ldf_p(P[2] + i);
  if ((fl & 4) != 0) { p = p * pf(11); } else if ((fl & 8) != 0) { g = g + pf(10) * p; }
  let m0 = ldf_m(P[4] + i);
  let m = m0 + pf(7) * (g - m0);
  let v = ldf_v(P[5] + i) * pf(8) + pf(9) * g * g;
  stf_m(P[4] + i, m);
  stf_v(P[5] + i, v);
  var denom: f32;
  if ((fl & 1) != 0) {
    let mx = max(ldf_vmax(P[6] + i), v);
    stf_vmax(P[6] + i, mx);
    denom = sqrt(mx) / pf(14) + pf(12);
  } else {
    denom = sqrt(v) / pf(14) + pf(12);
  }
  stf_p(P[2] + i, p + pf(13) * (m / denom));
}
//@kernel sgd
// P = [n, flags (1 has buffer, 2 maximize, 4 nesterov, 8 first step, 16 weight decay), offsets p g buf,
//      bits of lr, momentum, 1-dampening, weight decay]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  let fl = P[1];
  var d = ldf_g(P[3] + i);
  if ((fl & 2) != 0) { d = -d; }
  let p = ldf_p(P[2] + i);
  if ((fl & 16) != 0) { d = d + pf(8) * p; }
  if ((fl & 1) != 0) {
    var b = d;
    if ((fl & 8) == 0) { b = ldf_buf(P[4] + i) * pf(6) + pf(7) * d; }
    stf_buf(P[4] + i, b);
    d = select(b, d + pf(6) * b, (fl & 4) != 0);
  }
  stf_p(P[2] + i, p - pf(5) * d);
}
