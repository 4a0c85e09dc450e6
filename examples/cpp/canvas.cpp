// Canvas and traces from C++: render a radial energy field, write it as PPM and PNG, print the
// row-wise power spectrum's shape, then close a loop with a weights session that writes a trace.
//   ./example_canvas [OUTPUT_DIR]
#include <cstdio>
#include <memory>
#include <string>

#include "spiraltorch/canvas/canvas_projector.h"
#include "spiraltorch/canvas/image_io.h"
#include "spiraltorch/io/trace.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/zspace/session.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  st::canvas::CanvasProjector canvas(96, 128);
  const st::Tensor surface = canvas.render_radial(3.0, 2.0);
  st::canvas::write_ppm(dir + "/spiraltorch_canvas.ppm", surface);
  st::canvas::write_png(dir + "/spiraltorch_canvas.png", surface);
  const st::Tensor spectrum = canvas.fft_power_spectrum();
  std::printf("surface %s, power spectrum %s\n", st::shape_str(surface.shape()).c_str(),
              st::shape_str(spectrum.shape()).c_str());

  st::zspace::AmegagradSession::Options options;
  options.trace = std::make_shared<st::io::TraceWriter>(dir + "/canvas_session_trace.jsonl", "AmegagradSession");
  st::zspace::AmegagradSession session(1, 8, options);
  session.step_wave(st::Tensor::from_vector<double>({0.4, -0.6, 0.2, 0.1, -0.3, 0.5, -0.1, 0.2}, {1, 8}));
  st::canvas::CanvasProjector small(16, 32, {st::canvas::Colormap::Diverging, st::canvas::Normalization::Symmetric});
  for (int i = 0; i < 4; ++i) {
    small.render(session.weights());
    const auto step = session.step_wave(small.loopback_patch(1, 8));
    std::printf("round %d: canvas energy %.4f, zspace.loss %.4f\n", i, *small.atlas_frame(1.0).metric("canvas.energy"),
                step.frame.metric("zspace.loss").value_or(0.0));
  }
  std::printf("trace: %lld events in %s\n", static_cast<long long>(options.trace->events_written()),
              options.trace->path().c_str());
}
