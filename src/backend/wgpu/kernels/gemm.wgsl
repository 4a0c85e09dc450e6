// C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b], row-major, float32, register-blocked.
// A workgroup of 256 invocations (16 x 16) computes a {{BM}} x {{BM}} tile of C; each invocation
// {{TM}} x {{TM}} outputs held in vec4 registers: rows g * {{HALF}} + ty * 4 + r and columns
// h * {{HALF}} + tx * 4 + c (g, h < {{TM}} / 4), so an invocation reads its operands from
// workgroup memory as whole vec4s and a row of invocations stores C as consecutive vec4s.
// K advances {{BK}} at a time through workgroup memory (As[p][i], Bs[p][j] as vec4 over i / j);
// the next K step's global loads (one vec4 of A and one of B per invocation, vector loads when the
// operand's contiguous axis is aligned, else four bounds-checked scalars) are issued before the
// current step's products. gemm.cpp generates the loads ({{LOADA}}, {{LOADB}}: ra / rb from step
// q0), their stores into workgroup memory ({{STOREA}}, {{STOREB}}), the unrolled products
// ({{FMAS}}) and the edge-checked epilogue ({{EPILOGUE}}); {{AT}}/{{BT}}/{{CT}} are the element
// types the buffers are viewed as (f32 or vec4<f32>).
// P = [m, n, k, lda, ldb, ldc, a offset, b offset, c offset, stride a, stride b, stride c,
// alpha bits, beta bits, K slices S, slice length] (offsets and strides in floats). With S > 1
// workgroup z is (batch item, slice) and C is the scratch of per-slice products that
// splitk_sum adds up.
//@kernel tiled
@group(0) @binding(1) var<storage, {{AB_ACCESS}}> A: array<{{AT}}>;
@group(0) @binding(2) var<storage, {{AB_ACCESS}}> B: array<{{BT}}>;
@group(0) @binding(3) var<storage, read_write> C: array<{{CT}}>;
var<workgroup> As: array<vec4<f32>, 256>;
var<workgroup> Bs: array<vec4<f32>, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = P[0];
  let n = P[1];
  let lda = P[3];
  let ldb = P[4];
  let ldc = P[5];
  // Split K: z = batch item * P[14] + slice; this slice covers K in [kbeg, k).
  let z = i32(wid.z);
  let bz = z / P[14];
  let kbeg = (z % P[14]) * P[15];
  let k = min(P[2], kbeg + P[15]);
  let aoff = P[6] + bz * P[9];
  let boff = P[7] + bz * P[10];
  let coff = P[8] + z * P[11];
  let row0 = i32(wid.y) * {{BM}};
  let col0 = i32(wid.x) * {{BM}};
  let l = i32(lid);
  let ty = l / 16;
  let tx = l % 16;
{{DECL}}
  var ra = vec4<f32>(0.0);
  var rb = vec4<f32>(0.0);
  var q0 = kbeg;
  {{LOADA}}
  {{LOADB}}
  {{STOREA}}
  {{STOREB}}
  workgroupBarrier();
  for (var p0 = kbeg; p0 < k; p0 = p0 + {{BK}}) {
    q0 = p0 + {{BK}};
    let more = q0 < k;
    if (more) {
      {{LOADA}}
      {{LOADB}}
    }
{{FMAS}}
    workgroupBarrier();
    if (more) {
      {{STOREA}}
      {{STOREB}}
    }
    workgroupBarrier();
  }
  let alpha = pf(12);
  let beta = pf(13);
{{EPILOGUE}}
}
//@kernel splitk_sum
// C[b](i, j) = alpha * sum over slices s of W[b * S + s](i, j) + beta * C[b](i, j), W dense m x n.
// P = [batch * m * n, m * n, n, S, c offset, ldc, stride c, alpha bits, beta bits]
@group(0) @binding(1) var<storage, read_write> W: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nw, lid, 256u);
  if (t >= P[0]) { return; }
  let mn = P[1];
  let b = t / mn;
  let e = t % mn;
  var acc = 0.0;
  for (var s = 0; s < P[3]; s = s + 1) { acc = acc + W[(b * P[3] + s) * mn + e]; }
  let at = P[4] + b * P[6] + (e / P[2]) * P[5] + e % P[2];
  var r = pf(7) * acc;
  let beta = pf(8);
  if (beta != 0.0) { r = r + beta * C[at]; }
  C[at] = r;
}
