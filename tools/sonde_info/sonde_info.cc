// sonde-info: what this Sonde library exposes to tools, read through the
// interfaces themselves (MPI_T and PERUSE), as text or as JSON (--json).
//
//   sonde-info [--json] [--help]
//
// Lists the library version, PERUSE events, control variables with their
// current values, performance variables, categories as a tree, MPI_T event
// types and timestamp sources. Works on its own (a singleton MPI job) and
// under `mpiexec -n N` (rank 0 prints). It calls MPI_Init because PERUSE and
// the communicator-bound variables exist only then; the cvar values shown
// are the ones this process got from the environment.
#include <mpi.h>
#include <peruse.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* class_name(int c) {
  static const char* const names[] = {"state",        "level",   "size",      "percentage", "highwatermark",
                                      "lowwatermark", "counter", "aggregate", "timer",      "generic"};
  return c >= 0 && c <= MPI_T_PVAR_CLASS_GENERIC ? names[c] : "?";
}

const char* bind_name(int b) {
  switch (b) {
    case MPI_T_BIND_NO_OBJECT: return "none";
    case MPI_T_BIND_MPI_COMM: return "communicator";
    default: return "other";
  }
}

const char* scope_name(int s) {
  static const char* const names[] = {"constant", "readonly", "local", "group", "group_eq", "all", "all_eq"};
  return s >= 0 && s <= MPI_T_SCOPE_ALL_EQ ? names[s] : "?";
}

const char* type_name(MPI_Datatype t) {
  if (t == MPI_INT) return "int";
  if (t == MPI_UNSIGNED) return "unsigned";
  if (t == MPI_UNSIGNED_LONG) return "unsigned long";
  if (t == MPI_UNSIGNED_LONG_LONG) return "unsigned long long";
  if (t == MPI_COUNT) return "count";
  if (t == MPI_CHAR) return "char";
  if (t == MPI_DOUBLE) return "double";
  return "?";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

// An MPI_T string: asks for the length, then the text (section 15.3.3).
template <class F>
std::string get_string(F call) {
  int len = 0;
  call(nullptr, &len);
  std::vector<char> buf(size_t(len > 0 ? len : 1));
  call(buf.data(), &len);
  return buf.data();
}

std::string enum_text(MPI_T_enum e, int value) {
  int n = 0;
  MPI_T_enum_get_info(e, &n, nullptr, nullptr);
  for (int i = 0; i < n; ++i) {
    int v;
    char name[128];
    int len = sizeof name;
    MPI_T_enum_get_item(e, i, &v, name, &len);
    if (v == value) return name;
  }
  return std::to_string(value);
}

struct Cvar {
  std::string name, desc, value;
  int verbosity, scope;
  MPI_Datatype type;
  bool value_is_string;
};

struct Pvar {
  std::string name, desc;
  int verbosity, cls, bind, readonly, continuous, atomic;
  MPI_Datatype type;
};

struct Category {
  std::string name, desc;
  std::vector<int> cvars, pvars, events, children;
};

struct EventType {
  std::string name, desc;
  int elements;
};

struct Info {
  std::string version;
  std::vector<std::pair<int, std::string>> peruse;
  std::vector<Cvar> cvars;
  std::vector<Pvar> pvars;
  std::vector<Category> categories;
  std::vector<EventType> events;
  std::vector<std::string> sources;
  long long ticks_per_second = 0;
};

Info gather() {
  Info info;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  info.version = version;

  if (PERUSE_Init() == PERUSE_SUCCESS) {
    int n = 0;
    char** names = nullptr;
    int* ids = nullptr;
    PERUSE_Query_supported_events(&n, &names, &ids);
    for (int i = 0; i < n; ++i) info.peruse.push_back({ids[i], names[i]});
  }

  int n = 0;
  MPI_T_cvar_get_num(&n);
  for (int i = 0; i < n; ++i) {
    Cvar c;
    MPI_T_enum e = MPI_T_ENUM_NULL;
    int bind;
    c.name = get_string([&](char* b, int* l) {
      MPI_T_cvar_get_info(i, b, l, &c.verbosity, &c.type, &e, nullptr, nullptr, &bind, &c.scope);
    });
    c.desc = get_string([&](char* b, int* l) {
      MPI_T_cvar_get_info(i, nullptr, nullptr, nullptr, nullptr, nullptr, b, l, nullptr, nullptr);
    });
    MPI_T_cvar_handle h;
    int count = 0;
    c.value_is_string = c.type == MPI_CHAR;
    if (MPI_T_cvar_handle_alloc(i, nullptr, &h, &count) == MPI_SUCCESS) {
      std::vector<char> buf(size_t(count) * 8 + 8);
      MPI_T_cvar_read(h, buf.data());
      if (c.type == MPI_CHAR) c.value = buf.data();
      else if (c.type == MPI_INT) {
        int v;
        std::memcpy(&v, buf.data(), sizeof v);
        c.value = e != MPI_T_ENUM_NULL ? enum_text(e, v) : std::to_string(v);
        c.value_is_string = e != MPI_T_ENUM_NULL;
      } else if (c.type == MPI_UNSIGNED) {
        unsigned v;
        std::memcpy(&v, buf.data(), sizeof v);
        c.value = std::to_string(v);
      } else {
        unsigned long long v;
        std::memcpy(&v, buf.data(), sizeof v);
        c.value = std::to_string(v);
      }
      MPI_T_cvar_handle_free(&h);
    }
    info.cvars.push_back(c);
  }

  MPI_T_pvar_get_num(&n);
  for (int i = 0; i < n; ++i) {
    Pvar p;
    p.name = get_string([&](char* b, int* l) {
      MPI_T_pvar_get_info(i, b, l, &p.verbosity, &p.cls, &p.type, nullptr, nullptr, nullptr, &p.bind, &p.readonly,
                          &p.continuous, &p.atomic);
    });
    p.desc = get_string([&](char* b, int* l) {
      MPI_T_pvar_get_info(i, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, b, l, nullptr, nullptr, nullptr,
                          nullptr);
    });
    info.pvars.push_back(p);
  }

  MPI_T_category_get_num(&n);
  for (int i = 0; i < n; ++i) {
    Category c;
    int ncv = 0, npv = 0, ncat = 0, nev = 0;
    c.name =
        get_string([&](char* b, int* l) { MPI_T_category_get_info(i, b, l, nullptr, nullptr, &ncv, &npv, &ncat); });
    c.desc = get_string(
        [&](char* b, int* l) { MPI_T_category_get_info(i, nullptr, nullptr, b, l, nullptr, nullptr, nullptr); });
    MPI_T_category_get_num_events(i, &nev);
    c.cvars.resize(size_t(ncv));
    c.pvars.resize(size_t(npv));
    c.children.resize(size_t(ncat));
    c.events.resize(size_t(nev));
    MPI_T_category_get_cvars(i, ncv, c.cvars.data());
    MPI_T_category_get_pvars(i, npv, c.pvars.data());
    MPI_T_category_get_categories(i, ncat, c.children.data());
    MPI_T_category_get_events(i, nev, c.events.data());
    info.categories.push_back(c);
  }

  MPI_T_event_get_num(&n);
  for (int i = 0; i < n; ++i) {
    EventType e;
    e.elements = 0;
    e.name = get_string([&](char* b, int* l) {
      MPI_T_event_get_info(i, b, l, nullptr, nullptr, nullptr, &e.elements, nullptr, nullptr, nullptr, nullptr,
                           nullptr);
    });
    e.desc = get_string([&](char* b, int* l) {
      MPI_T_event_get_info(i, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, b, l, nullptr);
    });
    info.events.push_back(e);
  }

  MPI_T_source_get_num(&n);
  for (int i = 0; i < n; ++i) {
    MPI_Count tps = 0;
    info.sources.push_back(get_string(
        [&](char* b, int* l) { MPI_T_source_get_info(i, b, l, nullptr, nullptr, nullptr, &tps, nullptr, nullptr); }));
    info.ticks_per_second = tps;
  }
  return info;
}

// Categories that are nobody's child are the roots of the tree.
std::vector<int> roots(const Info& info) {
  std::vector<bool> child(info.categories.size());
  for (const Category& c : info.categories)
    for (int k : c.children) child[size_t(k)] = true;
  std::vector<int> r;
  for (size_t i = 0; i < child.size(); ++i)
    if (!child[i]) r.push_back(int(i));
  return r;
}

void print_tree(const Info& info, int cat, int depth) {
  const Category& c = info.categories[size_t(cat)];
  std::string pad(size_t(depth) * 2, ' ');
  std::printf("%s%s  (%zu cvars, %zu pvars, %zu events): %s\n", pad.c_str(), c.name.c_str(), c.cvars.size(),
              c.pvars.size(), c.events.size(), c.desc.c_str());
  for (int v : c.cvars) std::printf("%s    cvar  %s\n", pad.c_str(), info.cvars[size_t(v)].name.c_str());
  for (int v : c.pvars) std::printf("%s    pvar  %s\n", pad.c_str(), info.pvars[size_t(v)].name.c_str());
  for (int v : c.events) std::printf("%s    event %s\n", pad.c_str(), info.events[size_t(v)].name.c_str());
  for (int k : c.children) print_tree(info, k, depth + 1);
}

void print_text(const Info& info) {
  std::printf("%s\n\n", info.version.c_str());
  std::printf("PERUSE events (%zu):\n", info.peruse.size());
  for (auto& [id, name] : info.peruse) std::printf("  %3d  %s\n", id, name.c_str());
  std::printf("\nControl variables (%zu):\n", info.cvars.size());
  for (const Cvar& c : info.cvars)
    std::printf("  %-26s = %-12s  %s, scope %s, verbosity %d\n      %s\n", c.name.c_str(),
                c.value_is_string ? ("\"" + c.value + "\"").c_str() : c.value.c_str(), type_name(c.type),
                scope_name(c.scope), c.verbosity, c.desc.c_str());
  std::printf("\nPerformance variables (%zu):\n", info.pvars.size());
  for (const Pvar& p : info.pvars)
    std::printf("  %-40s %-13s %-18s bound to %-12s %s%s%s\n      %s\n", p.name.c_str(), class_name(p.cls),
                type_name(p.type), bind_name(p.bind), p.continuous ? "continuous " : "", p.readonly ? "readonly " : "",
                p.atomic ? "atomic" : "", p.desc.c_str());
  std::printf("\nCategories:\n");
  for (int r : roots(info)) print_tree(info, r, 1);
  std::printf("\nMPI_T event types (%zu), bound to a communicator, %d elements each "
              "(unique_id, peer, tag, count, datatype, operation, timestamp):\n",
              info.events.size(), info.events.empty() ? 0 : info.events[0].elements);
  for (const EventType& e : info.events) std::printf("  %s\n", e.name.c_str());
  std::printf("\nEvent sources (%zu):\n", info.sources.size());
  for (size_t i = 0; i < info.sources.size(); ++i)
    std::printf("  %zu  %s (%lld ticks per second)\n", i, info.sources[i].c_str(), info.ticks_per_second);
}

void print_json(const Info& info) {
  auto list = [](const std::vector<int>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::printf("{\n  \"version\": %s,\n", json_string(info.version).c_str());
  std::printf("  \"peruse_events\": [");
  for (size_t i = 0; i < info.peruse.size(); ++i)
    std::printf("%s\n    {\"id\": %d, \"name\": %s}", i ? "," : "", info.peruse[i].first,
                json_string(info.peruse[i].second).c_str());
  std::printf("\n  ],\n  \"cvars\": [");
  for (size_t i = 0; i < info.cvars.size(); ++i) {
    const Cvar& c = info.cvars[i];
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"value\": %s, \"datatype\": %s, \"scope\": %s, "
                "\"verbosity\": %d, \"description\": %s}",
                i ? "," : "", i, json_string(c.name).c_str(),
                c.value_is_string ? json_string(c.value).c_str() : c.value.c_str(),
                json_string(type_name(c.type)).c_str(), json_string(scope_name(c.scope)).c_str(), c.verbosity,
                json_string(c.desc).c_str());
  }
  std::printf("\n  ],\n  \"pvars\": [");
  for (size_t i = 0; i < info.pvars.size(); ++i) {
    const Pvar& p = info.pvars[i];
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"class\": %s, \"datatype\": %s, \"bind\": %s, "
                "\"readonly\": %s, \"continuous\": %s, \"atomic\": %s, \"verbosity\": %d, \"description\": %s}",
                i ? "," : "", i, json_string(p.name).c_str(), json_string(class_name(p.cls)).c_str(),
                json_string(type_name(p.type)).c_str(), json_string(bind_name(p.bind)).c_str(),
                p.readonly ? "true" : "false", p.continuous ? "true" : "false", p.atomic ? "true" : "false",
                p.verbosity, json_string(p.desc).c_str());
  }
  std::printf("\n  ],\n  \"categories\": [");
  for (size_t i = 0; i < info.categories.size(); ++i) {
    const Category& c = info.categories[i];
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"description\": %s, \"cvars\": %s, \"pvars\": %s, "
                "\"events\": %s, \"categories\": %s}",
                i ? "," : "", i, json_string(c.name).c_str(), json_string(c.desc).c_str(), list(c.cvars).c_str(),
                list(c.pvars).c_str(), list(c.events).c_str(), list(c.children).c_str());
  }
  std::printf("\n  ],\n  \"category_roots\": %s,\n  \"events\": [", list(roots(info)).c_str());
  for (size_t i = 0; i < info.events.size(); ++i)
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"elements\": %d, \"bind\": \"communicator\", "
                "\"description\": %s}",
                i ? "," : "", i, json_string(info.events[i].name).c_str(), info.events[i].elements,
                json_string(info.events[i].desc).c_str());
  std::printf("\n  ],\n  \"sources\": [");
  for (size_t i = 0; i < info.sources.size(); ++i)
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"ticks_per_second\": %lld}", i ? "," : "", i,
                json_string(info.sources[i]).c_str(), info.ticks_per_second);
  std::printf("\n  ]\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: sonde-info [--json]\n"
                  "Lists what Sonde exposes to tools: PERUSE events, MPI_T control variables (with their\n"
                  "current values), performance variables, categories (as a tree), event types and sources.\n"
                  "Runs alone or under mpiexec (rank 0 prints).\n");
      return 0;
    } else {
      std::fprintf(stderr, "sonde-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  int provided;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "sonde-info: MPI_T_init_thread failed\n");
    return 1;
  }
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    Info info = gather();
    if (json) print_json(info);
    else print_text(info);
    std::fflush(stdout);
  }
  MPI_Finalize();
  MPI_T_finalize();
  return 0;
}
