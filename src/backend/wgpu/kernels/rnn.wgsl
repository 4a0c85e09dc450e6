// The pointwise parts of the fused LSTM / GRU recurrences (src/backend/wgpu/rnn.cpp runs one
// GEMM per step for h_{t-1} W_hh^T and one of these per step): the CUDA backend's formulas,
// gate order and saved tensors (src/backend/cuda/rnn.cu). Offsets in P are in elements.
//@kernel lstm_load_x
// P = [steps * B * G, G, B, stride t, stride b, x off, a off]: acts <- xproj (strided -> contiguous)
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = linear_id(wid, nw, lid, 256u);
  if (e >= P[0]) { return; }
  let G = P[1];
  let j = e % G;
  let r = e / G;
  stf_a(P[6] + e, ldf_x(P[5] + (r / P[2]) * P[3] + (r % P[2]) * P[4] + j));
}
//@kernel lstm_gates
// P = [B * H, H, a off (this step), h_prev off, c_prev off, h off, c off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = linear_id(wid, nw, lid, 256u);
  if (e >= P[0]) { return; }
  let H = P[1];
  let b = e / H;
  let j = e % H;
  let ab = P[2] + b * 4 * H;
  let ig = f_sigmoid(ldf_a(ab + j));
  let fg = f_sigmoid(ldf_a(ab + H + j));
  let gg = f_tanh(ldf_a(ab + 2 * H + j));
  let og = f_sigmoid(ldf_a(ab + 3 * H + j));
  stf_a(ab + j, ig);
  stf_a(ab + H + j, fg);
  stf_a(ab + 2 * H + j, gg);
  stf_a(ab + 3 * H + j, og);
  let c = fg * ldf_cp(P[4] + e) + ig * gg;
  stf_c(P[6] + e, c);
  stf_h(P[5] + e, f_tanh(c) * og);
}
//@kernel lstm_back_gates
// P = [B * H, H, a off, c_t off, c_prev off, gh off, gc off, dgates off, dc off, dhrec off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = linear_id(wid, nw, lid, 256u);
  if (e >= P[0]) { return; }
  let H = P[1];
  let b = e / H;
  let j = e % H;
  let ab = P[2] + b * 4 * H;
  let db = P[7] + b * 4 * H;
  let i = ldf_a(ab + j);
  let f = ldf_a(ab + H + j);
  let gg = ldf_a(ab + 2 * H + j);
  let o = ldf_a(ab + 3 * H + j);
  let dht = ldf_g(P[5] + e) + ldf_dhrec(P[9] + e);
  let tc = f_tanh(ldf_hc(P[3] + e));
  let dct = ldf_g(P[6] + e) + ldf_dc(P[8] + e) + dht * o * (1.0 - tc * tc);
  stf_d(db + j, dct * gg * i * (1.0 - i));
  stf_d(db + H + j, dct * ldf_cp(P[4] + e) * f * (1.0 - f));
  stf_d(db + 2 * H + j, dct * i * (1.0 - gg * gg));
  stf_d(db + 3 * H + j, dht * tc * o * (1.0 - o));
  stf_dc(P[8] + e, dct * f);
}
//@kernel gru_gates
// P = [B * H, H, x off (step t), stride b, gh off, has bias, bias off, h_prev off, h off, saved off (step t)]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = linear_id(wid, nw, lid, 256u);
  if (e >= P[0]) { return; }
  let H = P[1];
  let b = e / H;
  let j = e % H;
  let x = P[2] + b * P[3];
  let g = P[4] + b * 3 * H;
  let s = P[9] + b * 4 * H;
  var br = 0.0;
  var bz = 0.0;
  var bn = 0.0;
  if (P[5] == 1) {
    br = ldf_bias(P[6] + j);
    bz = ldf_bias(P[6] + H + j);
    bn = ldf_bias(P[6] + 2 * H + j);
  }
  let r = f_sigmoid(ldf_x(x + j) + ldf_gh(g + j) + br);
  let z = f_sigmoid(ldf_x(x + H + j) + ldf_gh(g + H + j) + bz);
  let ghn = ldf_gh(g + 2 * H + j) + bn;
  let n = f_tanh(ldf_x(x + 2 * H + j) + r * ghn);
  stf_s(s + j, r);
  stf_s(s + H + j, z);
  stf_s(s + 2 * H + j, n);
  stf_s(s + 3 * H + j, ghn);
  stf_h(P[8] + e, (1.0 - z) * n + z * ldf_hp(P[7] + e));
}
//@kernel gru_back_gates
// P = [B * H, H, saved off (step t), h_prev off, g off (step t), dhrec off, dx off (step t), dgh off (step t), next off]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = linear_id(wid, nw, lid, 256u);
  if (e >= P[0]) { return; }
  let H = P[1];
  let b = e / H;
  let j = e % H;
  let s = P[2] + b * 4 * H;
  let r = ldf_s(s + j);
  let z = ldf_s(s + H + j);
  let n = ldf_s(s + 2 * H + j);
  let ghn = ldf_s(s + 3 * H + j);
  let dh = ldf_go(P[4] + e) + ldf_dr(P[5] + e);
  let dpn = dh * (1.0 - z) * (1.0 - n * n);
  let dpz = dh * (ldf_hp(P[3] + e) - n) * z * (1.0 - z);
  let dpr = dpn * ghn * r * (1.0 - r);
  let dxb = P[6] + b * 3 * H;
  let dgb = P[7] + b * 3 * H;
  stf_dx(dxb + j, dpr);
  stf_dx(dxb + H + j, dpz);
  stf_dx(dxb + 2 * H + j, dpn);
  stf_dg(dgb + j, dpr);
  stf_dg(dgb + H + j, dpz);
  stf_dg(dgb + 2 * H + j, dpn * r);
  stf_nx(P[8] + e, dh * z);
}
