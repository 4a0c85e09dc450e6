// Registration of the nn layers beyond Module/Linear/Sequential. Each group of
// layers adds its own bind_* function and is called from here.
#include "nn_bind.h"

namespace stpy {

void bind_nn_seq(nb::module_& nn);     // nn_seq.cpp
void bind_nn_wave(nb::module_& nn);    // nn_wave.cpp
void bind_nn_desire(nb::module_& nn);  // nn_desire.cpp
void bind_nn_vae(nb::module_& nn);     // nn_vae.cpp

void bind_nn_basic(nb::module_& nn);        // nn_basic.cpp
void bind_nn_activations(nb::module_& nn);  // nn_activations.cpp
void bind_nn_norm(nb::module_& nn);         // nn_norm.cpp
void bind_nn_conv(nb::module_& nn);         // nn_conv.cpp

void bind_nn_loss(nb::module_& nn);                        // nn_loss.cpp
void bind_nn_loss_margin_likelihood(nb::module_& nn);      // nn_loss_margin_likelihood.cpp
void bind_nn_handoff(nb::module_& nn);                     // nn_handoff.cpp
void bind_nn_pool_shuffle_dropout_cells(nb::module_& nn);  // nn_pool_shuffle_dropout_cells.cpp

void bind_nn_layers(nb::module_& nn) {
  bind_nn_loss(nn);
  bind_nn_loss_margin_likelihood(nn);
  (void)nn;
  bind_nn_basic(nn);
  bind_nn_activations(nn);
  bind_nn_norm(nn);
  bind_nn_conv(nn);
  bind_nn_seq(nn);
  bind_nn_wave(nn);
  bind_nn_desire(nn);
  bind_nn_vae(nn);
  bind_nn_handoff(nn);
  bind_nn_pool_shuffle_dropout_cells(nn);
}

}  // namespace stpy
