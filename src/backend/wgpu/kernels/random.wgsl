// Philox4x32-10 draws, element for element the numbers the CPU draws (src/core/generator.cpp,
// src/backend/cpu/random.cpp): element i takes block (counter + i / 4) for uniforms and the
// dropout mask, (counter + i / 2) for normals (Box-Muller on a pair).
// P = [n, out offset, seed lo, seed hi, counter lo, counter hi, then bits of p0, p1 (or scale, keep)].
//@kernel uniform
fn mulhilo(a: u32, b: u32) -> vec2<u32> {  // (high, low) words of the 64-bit product
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let ll = al * bl;
  let lh = al * bh;
  let hl = ah * bl;
  let hh = ah * bh;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  let hi = hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
  return vec2<u32>(hi, a * b);
}
fn philox(block: u32) -> vec4<u32> {
  let lo = u32(P[4]) + block;
  let carry = select(0u, 1u, lo < block);
  var c = vec4<u32>(lo, u32(P[5]) + carry, 0u, 0u);
  var k0 = u32(P[2]);
  var k1 = u32(P[3]);
  for (var r = 0; r < 10; r = r + 1) {
    let p0 = mulhilo(0xD2511F53u, c.x);
    let p1 = mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k0, p1.y, p0.x ^ c.w ^ k1, p0.y);
    k0 = k0 + 0x9E3779B9u;
    k1 = k1 + 0xBB67AE85u;
  }
  return c;
}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nw, lid, 256u);
  if (i >= P[0]) { return; }
  {{BODY}}
}
