// spiraltorch._core.nn: coherence VAE primitives — MellinBasis, ZSpaceVae, ZSpaceTextVae.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "nn_bind.h"
#include "spiraltorch/zspace/zspace_vae.h"

namespace stpy {

namespace {

using namespace st::nn;

nb::typed<nb::dict, std::string, double> stats_dict(const VaeStats& s) {
  nb::typed<nb::dict, std::string, double> d;
  d["batch_size"] = s.batch_size;
  d["recon_loss"] = s.recon_loss;
  d["kl_loss"] = s.kl_loss;
  d["evidence_lower_bound"] = s.evidence_lower_bound;
  d["weighted_loss"] = s.weighted_loss;
  d["kl_weight"] = s.kl_weight;
  return d;
}

}  // namespace

void bind_nn_vae(nb::module_& nn) {
  nb::class_<MellinBasis>(nn, "MellinBasis",
                          "Power-law feature map: y_i = sign(x_i) max(|x_i|, 1e-9)^e_i (e_i = 1 past the given "
                          "exponents), then each row L2-normalised (zero rows stay zero). Differentiable.")
      .def(nb::init<std::vector<double>>(), nb::arg("exponents"),
           "One exponent per feature (each finite, else ValueError).")
      .def_static("constant", &MellinBasis::constant, nb::arg("dim"), nb::arg("exponent"),
                  "A basis of dim features all with the same exponent (dim >= 1).")
      .def_static("ramp", &MellinBasis::ramp, nb::arg("dim"), nb::arg("start"), nb::arg("end"),
                  "A basis of dim exponents spaced evenly from start to end (dim >= 1).")
      .def_prop_ro("dimension", &MellinBasis::dimension, "The number of exponents.")
      .def_prop_ro("exponents", &MellinBasis::exponents, "The exponents, one per feature.")
      .def("project", &MellinBasis::project, nb::arg("x"),
           "The power-law map of x (..., features), each row then L2-normalised; differentiable.")
      .def("__repr__",
           [](const MellinBasis& b) { return "MellinBasis(dimension=" + std::to_string(b.dimension()) + ")"; });

  nb::class_<VaeOutput>(nn, "ZSpaceVaeState", "latent, reconstruction, mu and logvar of one forward pass.")
      .def_ro("latent", &VaeOutput::latent, "The sampled (or mean) latent z, (batch, latent_dim).")
      .def_ro("reconstruction", &VaeOutput::reconstruction, "The decoded x^, (batch, input_dim).")
      .def_ro("mu", &VaeOutput::mu, "The posterior mean, (batch, latent_dim).")
      .def_ro("logvar", &VaeOutput::logvar, "The posterior log-variance, (batch, latent_dim).");

  nb::class_<ZSpaceVae, Module>(
      nn, "ZSpaceVae",
      "Gaussian VAE with linear encoder/decoder: mu, logvar = linear encodings of x; z = mu + exp(logvar/2) eps "
      "in training (mu in eval); x^ = z D^T + b. loss(x, kl_weight) = reconstruction (mean ||x - x^||^2 / D) + "
      "kl_weight * KL(q(z|x) || N(0, I)); train with any optimizer. Calling it returns the reconstruction.")
      .def(nb::init<int64_t, int64_t, uint64_t, std::string>(), nb::arg("input_dim"), nb::arg("latent_dim"),
           nb::arg("seed") = 42, nb::arg("name") = "",
           "Linear encoders input_dim -> latent_dim for mu and logvar and a decoder latent_dim -> input_dim, "
           "initialised from the layer's own generator seeded with seed.")
      .def_prop_ro("input_dim", &ZSpaceVae::input_dim, "The size of each input row.")
      .def_prop_ro("latent_dim", &ZSpaceVae::latent_dim, "The size of the latent code.")
      .def_prop_ro("seed", &ZSpaceVae::seed, "The seed of the layer's own generator (initialisation and sampling).")
      .def("encode", &ZSpaceVae::encode, nb::arg("x"), "Returns (mu, logvar).")
      .def(
          "sample_latent", &ZSpaceVae::sample_latent, nb::arg("mu"), nb::arg("logvar"),
          "mu + exp(logvar / 2) * eps with eps ~ N(0, I) from the layer's generator (differentiable in mu and logvar).")
      .def("decode", &ZSpaceVae::decode, nb::arg("z"), "x^ = z D^T + b for z (batch, latent_dim).")
      .def("forward_full", &ZSpaceVae::forward_full, nb::arg("x"), nb::arg("use_mean") = false,
           "One pass over x (batch, input_dim): encodes, samples z (the mean when use_mean or in eval mode) and "
           "decodes; "
           "returns a ZSpaceVaeState.")
      .def("loss_terms", [](const ZSpaceVae& v, const Tensor& x, const VaeOutput& out) { return v.loss_terms(x, out); },
           nb::arg("x"), nb::arg("state"), "(reconstruction, kl) as differentiable scalars.")
      .def("loss",
           [](ZSpaceVae& v, const Tensor& x, double kl_weight) {
    const VaeOutput out = v.forward_full(x);
    auto [recon, kl] = v.loss_terms(x, out);
    return std::make_pair(st::add(recon, st::mul(kl, kl_weight)), stats_dict(v.stats(x, out, kl_weight)));
  }, nb::arg("x"), nb::arg("kl_weight") = 1.0,
           "One forward pass; returns (loss tensor to backpropagate, stats dict with recon_loss, kl_loss, "
           "evidence_lower_bound, weighted_loss, kl_weight, batch_size).")
      .def("evaluate",
           [](ZSpaceVae& v, const Tensor& x, double kl_weight) {
    st::NoGradGuard ng;
    return stats_dict(v.stats(x, v.forward_full(x, true), kl_weight));
  }, nb::arg("x"), nb::arg("kl_weight") = 1.0, "Stats of the mean reconstruction (z = mu), no gradients.")
      .def("prior_recon_loss", &ZSpaceVae::prior_recon_loss, nb::arg("x"),
           "Reconstruction error when decoding z ~ N(0, I) instead of the posterior: the baseline to beat.");

  nb::class_<ZSpaceTextVae, ZSpaceVae>(
      nn, "ZSpaceTextVae",
      "ZSpaceVae over the Z-space wave encoding of text fitted to window_chars characters (truncated or padded "
      "with spaces); input_dim = 2 * window_chars.")
      .def(nb::init<int64_t, int64_t, double, double, uint64_t, std::string>(), nb::arg("window_chars"),
           nb::arg("latent_dim"), nb::arg("curvature") = -1.0, nb::arg("temperature") = 1.0, nb::arg("seed") = 42,
           nb::arg("name") = "",
           "A ZSpaceVae with input_dim = 2 * window_chars over the wave encoding of text (curvature, temperature of "
           "the encoder).")
      .def_prop_ro("window_chars", &ZSpaceTextVae::window_chars, "The number of characters each text is fitted to.")
      .def_prop_ro("curvature", &ZSpaceTextVae::curvature, "The curvature of the wave encoder.")
      .def_prop_ro("temperature", &ZSpaceTextVae::temperature, "The temperature of the wave encoder.")
      .def("fit_text", &ZSpaceTextVae::fit_text, nb::arg("text"),
           "text truncated or padded with spaces to window_chars characters.")
      .def("encode_texts", &ZSpaceTextVae::encode_texts, nb::arg("texts"),
           "(len(texts), 2 * window_chars) float32 wave encodings.");
}

}  // namespace stpy
