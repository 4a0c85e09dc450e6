"""Canvas projector quickstart: renders a radial energy field into an RGBA surface, writes it as
spiraltorch_canvas.ppm (and .png), and prints the row-wise FFT power spectrum tensor's shape.

Usage: python canvas_projector_quickstart.py [OUTPUT_DIR]  (default: $SPIRALTORCH_EXAMPLE_OUT or the
current directory)."""

import os
import sys

import spiraltorch as st

out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPIRALTORCH_EXAMPLE_OUT", ".")
os.makedirs(out_dir, exist_ok=True)

projector = st.CanvasProjector(96, 128, colormap="heat")
surface = projector.render_radial(frequency=3.0, decay=2.0)  # rings under a Gaussian envelope
print("surface:", tuple(surface.shape), surface.dtype)

ppm = os.path.join(out_dir, "spiraltorch_canvas.ppm")
projector.write_ppm(ppm)
projector.write_png(os.path.join(out_dir, "spiraltorch_canvas.png"))
print("wrote", ppm, os.path.getsize(ppm), "bytes")

spectrum = projector.fft_power_spectrum()  # |rfft(row)|^2 of the field, one row per canvas row
print("fft power spectrum:", tuple(spectrum.shape))
metrics = projector.metrics()
print("mean intensity %.4f, spectral centroid %.4f" % (metrics["canvas.mean_intensity"],
                                                       metrics["canvas.spectral_centroid"]))
