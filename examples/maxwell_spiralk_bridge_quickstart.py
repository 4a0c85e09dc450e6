"""Maxwell-coded envelopes -> SpiralK hints: measure a coded envelope on a few channels, turn the
per-channel z statistics into SpiralK soft rules, and read them back for one channel."""

import random

import spiraltorch as st
from spiraltorch import spiralk

# A transmitter seen through two shielding levels: the expected block response is kappa * lambda.
near = spiralk.MaxwellFingerprint(gamma=1.0, modulation_depth=0.6, tissue_response=0.8, shielding_db=6.0,
                                  transmit_gain=1.2, polarization_angle=0.3, distance_m=1.5)
far = spiralk.MaxwellFingerprint(gamma=1.0, modulation_depth=0.6, tissue_response=0.8, shielding_db=20.0,
                                 transmit_gain=1.2, polarization_angle=1.2, distance_m=4.0)
kappa, sigma = 1.0, 0.25
for name, fp in (("near", near), ("far", far)):
    lam = fp.lambda_()
    need = spiralk.required_blocks(3.0, sigma, kappa, lam)
    print(f"{name}: lambda={lam:.4f}, blocks for z=3: {need:.1f}")

# Measure 24 blocks per channel (a seeded simulation of the coded response plus noise).
rng = random.Random(7)
bridge = spiralk.MaxwellSpiralKBridge("tile: 512")
for channel, fp in (("alpha:near", near), ("beta/far", far), ("gamma null", None)):
    mean = kappa * fp.lambda_() if fp else 0.0
    blocks = [rng.gauss(mean, sigma) for _ in range(24)]
    hint = bridge.push_measurements(channel, blocks)
    print(f"{hint.channel}: blocks={hint.blocks} mean={hint.mean:+.4f} z={hint.z_score:+.2f} "
          f"-> bias {hint.z_bias:+.3f}, weight {hint.weight:.3f}")

script = bridge.script()
print(script)

# The hints are SpiralK: evaluated with a channel in scope, only that channel's rule is active.
program = spiralk.parse(script)
for channel in ("alpha_near", "beta_far"):
    active = program.eval(channel=channel, blocks=24)["soft"]
    print(channel, "->", [(s["field"], round(s["value"], 3), round(s["weight"], 3)) for s in active])

# And they ride along a plan rewrite: the hard base rule applies, the soft rules are reported.
plan = st.plan("topk", 32, 2048, 4, backend="cpu")
rewritten, said = plan.rewrite_with_spiralk_explain(script, channel="alpha_near", blocks=24)
print("plan tile:", plan.tile, "->", rewritten.tile, "| soft hints:", len(said["soft"]))
