// A result record of the C++ core bound as a read-only Python class.
//
// Each record (a plain struct such as SplitLoop or MemoryPrediction) is
// declared once, in C++; its binding names every field once, and the Python
// side uses the bound class itself. What a frozen dataclass would give a
// Python reader comes from that one list of fields, not from code per
// record: construction by position or keyword (tests build records by hand),
// equality, hashing, a repr, `_fields`, `_asdict()` (JSON reports) and
// `_replace(**changes)`, copying and pickling.
//
//   RecordClass<MemoryPrediction>(m, "MemoryPrediction", "doc")
//       .Field("temp_bytes", &MemoryPrediction::temp_bytes, "the heap ...")
//       .Derived("peak_bytes", &MemoryPrediction::peak_bytes, "...");
//
// Fields read as Python values: a std::vector as a tuple, a std::map as a
// dict, a nested record as its bound class. Derived values are read-only
// properties computed from the fields; `_asdict()` includes them, the
// constructor does not take them.
#ifndef EXLA_BINDINGS_RECORD_CLASS_H_
#define EXLA_BINDINGS_RECORD_CLASS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace exla {
namespace record_internal {

template <typename V>
pybind11::object ToPython(const V& value) {
  return pybind11::cast(value);
}

template <typename V>
pybind11::object ToPython(const std::vector<V>& values) {
  pybind11::tuple result(values.size());
  for (size_t i = 0; i < values.size(); ++i) result[i] = ToPython(values[i]);
  return std::move(result);
}

// The names a record class reads and writes, in declaration order, shared
// by its generic methods.
template <typename T>
struct Fields {
  std::vector<std::string> names;
  std::vector<std::function<void(T&, pybind11::handle)>> setters;
  std::vector<std::string> derived;

  pybind11::object Get(const pybind11::object& self, const std::string& name) const {
    return self.attr(name.c_str());
  }
  pybind11::tuple Values(const pybind11::object& self) const {
    pybind11::tuple values(names.size());
    for (size_t i = 0; i < names.size(); ++i) values[i] = Get(self, names[i]);
    return values;
  }
  void Set(T& record, const std::string& name, pybind11::handle value) const {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return setters[i](record, value);
    }
    throw pybind11::type_error("unexpected field '" + name + "'");
  }
};

// A record's value as plain Python data: records become dicts, tuples of
// them lists of dicts.
inline pybind11::object Plain(pybind11::handle value) {
  if (pybind11::hasattr(value, "_asdict") && !pybind11::isinstance<pybind11::type>(value)) {
    return value.attr("_asdict")();
  }
  if (pybind11::isinstance<pybind11::tuple>(value)) {
    pybind11::list items;
    for (pybind11::handle item : value) items.append(Plain(item));
    return std::move(items);
  }
  return pybind11::reinterpret_borrow<pybind11::object>(value);
}

}  // namespace record_internal

template <typename T>
class RecordClass {
 public:
  RecordClass(pybind11::handle scope, const char* name, const char* doc)
      : class_(scope, name, doc), fields_(std::make_shared<record_internal::Fields<T>>()) {}
  RecordClass(const RecordClass&) = delete;
  RecordClass& operator=(const RecordClass&) = delete;
  ~RecordClass() { Finish(); }

  // A field of the struct (or of a struct it derives from), read-only from Python.
  template <typename V, typename Of>
  RecordClass& Field(const char* name, V Of::*member, const char* doc) {
    static_assert(std::is_base_of<Of, T>::value, "a field of another record");
    class_.def_property_readonly(
        name, [member](const T& record) { return record_internal::ToPython(record.*member); },
        doc);
    fields_->names.push_back(name);
    fields_->setters.push_back(
        [member](T& record, pybind11::handle value) { record.*member = value.cast<V>(); });
    return *this;
  }

  // A field read in Python as another type (an enum as its name): `to` turns
  // the C++ value into the Python one, `from` a Python value back.
  template <typename V, typename Of, typename To, typename From>
  RecordClass& Converted(const char* name, V Of::*member, To to, From from, const char* doc) {
    static_assert(std::is_base_of<Of, T>::value, "a field of another record");
    class_.def_property_readonly(
        name, [member, to](const T& record) { return to(record.*member); }, doc);
    fields_->names.push_back(name);
    fields_->setters.push_back(
        [member, from](T& record, pybind11::handle value) { record.*member = from(value); });
    return *this;
  }

  // A value computed from the fields (a method of the struct or a function of it).
  template <typename Getter>
  RecordClass& Derived(const char* name, Getter getter, const char* doc) {
    class_.def_property_readonly(name, getter, doc);
    fields_->derived.push_back(name);
    return *this;
  }

 private:
  void Finish();

  pybind11::class_<T> class_;
  std::shared_ptr<record_internal::Fields<T>> fields_;
};

template <typename T>
void RecordClass<T>::Finish() {
  namespace py = pybind11;
  auto fields = fields_;
  py::tuple names(fields->names.size());
  for (size_t i = 0; i < fields->names.size(); ++i) names[i] = py::str(fields->names[i]);
  class_.attr("_fields") = names;
  // Fields left out keep the struct's defaults, as in C++.
  class_.def(py::init([fields](const py::args& args, const py::kwargs& kwargs) {
    if (args.size() > fields->names.size()) {
      throw py::type_error("too many positional fields: " + std::to_string(args.size()));
    }
    T record;
    for (size_t i = 0; i < args.size(); ++i) fields->setters[i](record, args[i]);
    for (auto item : kwargs) fields->Set(record, item.first.cast<std::string>(), item.second);
    return record;
  }));
  class_.def("_replace", [fields](const T& self, const py::kwargs& changes) {
    T record = self;
    for (auto item : changes) fields->Set(record, item.first.cast<std::string>(), item.second);
    return record;
  }, "A copy with the given fields changed.");
  class_.def("_asdict", [fields](const py::object& self) {
    py::dict result;
    for (const auto* names : {&fields->names, &fields->derived}) {
      for (const std::string& name : *names) {
        result[name.c_str()] = record_internal::Plain(fields->Get(self, name));
      }
    }
    return result;
  }, "The fields and derived values as plain data (records as dicts), e.g. for JSON.");
  class_.def("__eq__", [fields](const py::object& self, const py::object& other) -> py::object {
    if (!py::type::of(self).is(py::type::of(other))) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return py::bool_(fields->Values(self).equal(fields->Values(other)));
  });
  class_.def("__hash__", [fields](const py::object& self) { return py::hash(fields->Values(self)); });
  class_.def("__repr__", [fields](const py::object& self) {
    std::string text = py::str(py::type::of(self).attr("__name__")).cast<std::string>() + "(";
    for (size_t i = 0; i < fields->names.size(); ++i) {
      text += (i ? ", " : "") + fields->names[i] + "=" +
              py::repr(fields->Get(self, fields->names[i])).template cast<std::string>();
    }
    return text + ")";
  });
  // Immutable from Python: a copy is the record itself; a pickle, its fields.
  class_.def("__copy__", [](const py::object& self) { return self; });
  class_.def("__deepcopy__", [](const py::object& self, const py::object&) { return self; });
  class_.def("__reduce__", [fields](const py::object& self) {
    return py::make_tuple(py::type::of(self), fields->Values(self));
  });
}

}  // namespace exla

#endif  // EXLA_BINDINGS_RECORD_CLASS_H_
