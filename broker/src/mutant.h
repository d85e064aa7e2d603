// Planted bugs for the mutant catalog (scripts/mutants, mutants/catalog.tsv). Only builds
// configured with -DBROKER_MUTANTS=ON compile them in; there MUTANT(x) is true when the
// environment variable BROKER_MUTANT names x. Everywhere else MUTANT(x) is the constant
// false and the planted branch is dead code the compiler drops.
#pragma once

#if defined(BROKER_MUTANTS)
namespace broker {
/// Whether the planted bug `name` is switched on (BROKER_MUTANT=name). Thread-safe.
bool mutant_active(const char* name);
}  // namespace broker
#define MUTANT(name) (::broker::mutant_active(#name))
#else
#define MUTANT(name) false
#endif
