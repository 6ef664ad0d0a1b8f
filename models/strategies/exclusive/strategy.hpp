#pragma once
// The exclusive strategy (`mode: exclusive`, the default): one client per device — a dedicated
// GPU or MIG instance. No keys of its own. The device is a ConcurrentDevice with a client limit
// of 1 (its own concurrent requests share SMs by residency and HBM by max-min; concurrent.hpp).
// A second tenant placed on the device is refused at resolution. `compare` offers it as the
// dedicated baseline (`exclusive` or `dedicated`: every tenant gets a GPU of its own) and as
// `mig+exclusive`. A fault kills only its client.
#include "models/strategies/strategy.hpp"

namespace gpumux {

struct ExclusiveParams : ParamsOf<ExclusiveParams> {};

const Strategy& exclusive_strategy();

}  // namespace gpumux
