// Filled by its owner (see profiler/meson.build).
