"""SoT-3D -> TensorBiome quickstart: plan a golden-angle spiral schedule, grow a biome
from it under a topos guard, and re-import the canopy into Z-space (the Poincare ball)."""

import spiraltorch as st

plan = st.sot.generate_plan(24, base_radius=1.0, radial_growth=0.05, base_height=1.0, meso_gain=0.2, micro_gain=0.05)
print("macro orbits:", [m["length"] for m in plan.macro_summaries()])
print("first steps:", [(s["meso"]["role"], s["micro"]["role"], round(s["height"], 4)) for s in plan.steps()[:3]])

# A topos wide enough to hold the plan's 24 x 16 shoot, saturating at 4 (monotone soft clip).
topos = st.OpenCartesianTopos(-1.0, 1e-3, 4.0, 64, 24 * 16)
biome = plan.grow_biome(topos)
canopy = biome.canopy()
print("biome:", len(biome), "shoot(s), weight", round(biome.total_weight(), 3), "canopy", tuple(canopy.shape))
ball = biome.to_ball()
norms = (ball * ball).sum(-1).sqrt()
print("canopy rows in the ball: max norm %.6f < 1" % float(norms.max().item()))
