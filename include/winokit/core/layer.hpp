// The layer rule, checked by the compiler: a module depends only downwards,
//   core <- io <- model <- data <- eval <- report, game <- tools
// (report and game are siblings: neither includes the other). Every public header states its
// layer with WINOKIT_LAYER(name); the build compiles each layer's library with
// WINOKIT_BUILDING_LAYER set to that layer (CMakeLists.txt), so a wrong-way include stops the
// build with a static_assert naming both layers. Code outside the library (tools, tests,
// benchmarks, users) leaves WINOKIT_BUILDING_LAYER unset and may include everything.
//
//   #pragma once
//   #include "winokit/core/layer.hpp"
//   WINOKIT_LAYER(eval);
#pragma once

namespace winokit::layer {

enum Layer : int { core, io, model, data, eval, report, game, tools };

// Whether code of layer `from` may include a header of layer `to`.
constexpr bool may_include(Layer from, Layer to) {
  if (from == tools) return true;
  if ((from == report && to == game) || (from == game && to == report)) return false;
  return to <= from;
}

}  // namespace winokit::layer

#ifndef WINOKIT_BUILDING_LAYER
#define WINOKIT_BUILDING_LAYER tools
#endif

#define WINOKIT_LAYER(name)                                                                  \
  static_assert(                                                                             \
      ::winokit::layer::may_include(::winokit::layer::WINOKIT_BUILDING_LAYER,                \
                                    ::winokit::layer::name),                                 \
      "layer rule (core <- io <- model <- data <- eval <- report, game <- tools): " __FILE__ \
      " (layer " #name ") is included from a lower or sibling layer")
