// What the binding files share. Results cross into Python as the C++
// records themselves, bound as read-only classes (record_class.h) in
// records.cc: each record is declared once, in its C++ header.
#ifndef EXLA_BINDINGS_RECORDS_H_
#define EXLA_BINDINGS_RECORDS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "api/exla.h"

namespace exla {

// What `optimize` returns: the printed module and one record per pass.
struct OptimizedModule {
  std::string text;
  std::vector<PassRecord> passes;
};

// Binds every result record (records.cc); before the functions that return them.
void DefineRecords(pybind11::module_& m);

// Adds search_plans (plan_search_module.cc) to the module.
void DefinePlanSearch(pybind11::module_& m);

}  // namespace exla

#endif  // EXLA_BINDINGS_RECORDS_H_
