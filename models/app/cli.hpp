#pragma once
// The `gpumux` command line (SPEC.md §1). Exit codes: 0 ok; 1 an SLO failed (--fail-on-slo) or
// a MIG layout does not fit (`mig --check`); 2 bad input; 3 internal error.
namespace gpumux {

int run_cli(int argc, char** argv);

}  // namespace gpumux
