// Layering probe (tests/CMakeLists.txt, "layers.*"): compiled with one layer's include
// directories and GPUMUX_PROBE_HEADER set to a header of a higher layer, it must fail with
// "No such file or directory"; with a header of the layer itself (the control), it must build.
#include GPUMUX_PROBE_HEADER
