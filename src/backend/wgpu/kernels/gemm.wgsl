// C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b], row-major, float32. 64x64 tiles of C per
// workgroup of 256 invocations, each computing 4x4; K in steps of 16 through workgroup
// memory. P = [m, n, k, lda, ldb, ldc, a offset, b offset, c offset, stride a, stride b,
// stride c, alpha bits, beta bits]; {{AIDX}}/{{BIDX}} index A(i, p) and B(p, j) (transposes).
//@kernel tiled
var<workgroup> As: array<f32, 1024>;  // [16][64]: As[p * 64 + i]
var<workgroup> Bs: array<f32, 1024>;  // [16][64]: Bs[p * 64 + j]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = P[0];
  let n = P[1];
  let k = P[2];
  let lda = P[3];
  let ldb = P[4];
  let ldc = P[5];
  let bz = i32(wid.z);
  let aoff = P[6] + bz * P[9];
  let boff = P[7] + bz * P[10];
  let coff = P[8] + bz * P[11];
  let row0 = i32(wid.y) * 64;
  let col0 = i32(wid.x) * 64;
  let tr = i32(lid / 16u) * 4;  // this invocation's 4 rows and 4 columns in the tile
  let tc = i32(lid % 16u) * 4;
  var acc: array<f32, 16>;
  for (var q = 0; q < 16; q = q + 1) { acc[q] = 0.0; }
  for (var p0 = 0; p0 < k; p0 = p0 + 16) {
    for (var e = 0; e < 4; e = e + 1) {
      let idx = i32(lid) * 4 + e;  // 0..1023
      {{LOADS}}
    }
    workgroupBarrier();
    for (var p = 0; p < 16; p = p + 1) {
      let a = vec4<f32>(As[p * 64 + tr], As[p * 64 + tr + 1], As[p * 64 + tr + 2], As[p * 64 + tr + 3]);
      let b = vec4<f32>(Bs[p * 64 + tc], Bs[p * 64 + tc + 1], Bs[p * 64 + tc + 2], Bs[p * 64 + tc + 3]);
      for (var u = 0; u < 4; u = u + 1) {
        acc[u * 4 + 0] = acc[u * 4 + 0] + a[u] * b.x;
        acc[u * 4 + 1] = acc[u * 4 + 1] + a[u] * b.y;
        acc[u * 4 + 2] = acc[u * 4 + 2] + a[u] * b.z;
        acc[u * 4 + 3] = acc[u * 4 + 3] + a[u] * b.w;
      }
    }
    workgroupBarrier();
  }
  let alpha = pf(12);
  let beta = pf(13);
  for (var u = 0; u < 4; u = u + 1) {
    let i = row0 + tr + u;
    if (i >= m) { continue; }
    for (var v = 0; v < 4; v = v + 1) {
      let j = col0 + tc + v;
      if (j >= n) { continue; }
      let at = coff + i * ldc + j;
      var r = alpha * acc[u * 4 + v];
      if (beta != 0.0) { r = r + beta * ldf_c(at); }
      stf_c(at, r);
    }
  }
}
//@kernel tiled128
// Large products: 128x128 tiles of C per workgroup of 256 invocations (16 x 16), each computing
// 8x8 outputs at rows ty + 16u and columns tx + 16v (so a subgroup reads workgroup memory
// without bank conflicts and stores C coalesced); K in steps of 8. P and the loads as above.
var<workgroup> As: array<f32, 1024>;  // [8][128]: As[p * 128 + i]
var<workgroup> Bs: array<f32, 1024>;  // [8][128]: Bs[p * 128 + j]
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = P[0];
  let n = P[1];
  let k = P[2];
  let lda = P[3];
  let ldb = P[4];
  let ldc = P[5];
  let bz = i32(wid.z);
  let aoff = P[6] + bz * P[9];
  let boff = P[7] + bz * P[10];
  let coff = P[8] + bz * P[11];
  let row0 = i32(wid.y) * 128;
  let col0 = i32(wid.x) * 128;
  let ty = i32(lid / 16u);
  let tx = i32(lid % 16u);
  var acc: array<f32, 64>;
  for (var q = 0; q < 64; q = q + 1) { acc[q] = 0.0; }
  for (var p0 = 0; p0 < k; p0 = p0 + 8) {
    for (var e = 0; e < 4; e = e + 1) {
      let idx = e * 256 + i32(lid);  // 0..1023
      {{LOADS}}
    }
    workgroupBarrier();
    for (var p = 0; p < 8; p = p + 1) {
      var a: array<f32, 8>;
      var b: array<f32, 8>;
      for (var u = 0; u < 8; u = u + 1) {
        a[u] = As[p * 128 + ty + 16 * u];
        b[u] = Bs[p * 128 + tx + 16 * u];
      }
      for (var u = 0; u < 8; u = u + 1) {
        for (var v = 0; v < 8; v = v + 1) { acc[u * 8 + v] = acc[u * 8 + v] + a[u] * b[v]; }
      }
    }
    workgroupBarrier();
  }
  let alpha = pf(12);
  let beta = pf(13);
  for (var u = 0; u < 8; u = u + 1) {
    let i = row0 + ty + 16 * u;
    if (i >= m) { continue; }
    for (var v = 0; v < 8; v = v + 1) {
      let j = col0 + tx + 16 * v;
      if (j >= n) { continue; }
      let at = coff + i * ldc + j;
      var r = alpha * acc[u * 8 + v];
      if (beta != 0.0) { r = r + beta * ldf_c(at); }
      stf_c(at, r);
    }
  }
}
