// Registration of the nn layers beyond Module/Linear/Sequential. Each group of
// layers adds its own bind_* function and is called from here.
#include "nn_bind.h"

namespace stpy {

void bind_nn_layers(nb::module_& nn) { (void)nn; }

}  // namespace stpy
