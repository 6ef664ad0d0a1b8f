#pragma once
// The `gpumux` command line (docs/reference/cli.md, `gpumux help`; one file per group of
// subcommands: cli_simulate.cpp, cli_inspect.cpp; shared parts in cli_common.hpp). Exit codes: 0
// ok; 1 an SLO failed (--fail-on-slo) or a MIG layout does not fit (`mig --check`); 2 bad input;
// 3 internal error.
namespace gpumux {

int run_cli(int argc, char** argv);

}  // namespace gpumux
