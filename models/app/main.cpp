#include "models/app/cli.hpp"

int main(int argc, char** argv) { return gpumux::run_cli(argc, argv); }
