"""PyTorch's scaled_dot_product_attention forward and backward times on CUDA for the shapes of
bench/flash_attention_check.cu (CUDA-event timed, 20 calls after 3 warm-ups). Usage:
python bench/flash_attention_torch.py"""
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = True
def bench(dt, BH, L, D, causal):
    q, k, v = (torch.randn(BH // 12, 12, L, D, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
    g = torch.randn(BH // 12, 12, L, D, device="cuda", dtype=dt)
    for _ in range(3):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal); o.backward(g)
    torch.cuda.synchronize()
    a, b, c = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    reps = 20
    a.record()
    for _ in range(reps): o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    b.record()
    for _ in range(reps):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal); o.backward(g)
    c.record(); torch.cuda.synchronize()
    f = a.elapsed_time(b) / reps; fb = b.elapsed_time(c) / reps
    print(f"TORCH {dt} D={D} BH={BH} L={L} causal={causal} fwd {f:.3f} ms  bwd(fwd+bwd minus fwd) {fb - f:.3f} ms")
for dt, BH, L, D, causal in [(torch.bfloat16, 192, 512, 64, True), (torch.bfloat16, 192, 512, 64, False), (torch.float32, 192, 512, 64, True), (torch.bfloat16, 96, 1024, 128, True), (torch.float32, 96, 1024, 128, True)]:
    bench(dt, BH, L, D, causal)
