// Sorting by rank and stream compaction. {{LESS}}(a, b) / {{EQ}}(a, b) compare the elements at
// element indices a and b of x (NaN is the largest float); {{MOVE}} moves element src of x to
// element dst of the output.
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
//@kernel compact
// P = [n, x off, mask off, out off]: one workgroup walks x in chunks of 256, a prefix sum in
// workgroup memory placing each selected element after those before it.
var<workgroup> sc: array<i32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
  let n = P[0];
  var base = 0;
  for (var c = 0; c < n; c = c + 256) {
    let e = c + i32(lid);
    var flag = 0;
    if (e < n) { flag = select(0, 1, ldi_mask(P[2] + e) != 0); }
    sc[lid] = flag;
    workgroupBarrier();
    for (var s = 1u; s < 256u; s = s << 1u) {
      var v = sc[lid];
      if (lid >= s) { v = v + sc[lid - s]; }
      workgroupBarrier();
      sc[lid] = v;
      workgroupBarrier();
    }
    if (flag == 1) {
      let src = P[1] + e;
      let dst = P[3] + base + sc[lid] - 1;
      {{MOVE}}
    }
    base = base + sc[255];
    workgroupBarrier();
  }
}
