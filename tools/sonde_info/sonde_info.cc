// sonde-info: what this Sonde library exposes to tools, read through the
// interfaces themselves (MPI_T and PERUSE), as text, as JSON (--json) or as
// one key:value record per line (--parsable).
//
//   sonde-info [--json | --parsable] [--all | --level N] [--help]
//
// --level N (1..9) keeps the variables and event types whose MPI_T
// verbosity is at most the Nth of the nine levels (1 = USER_BASIC ...
// 9 = MPIDEV_ALL); --all (the default) keeps everything.
//
// Lists the library version, PERUSE events, control variables with their
// current values, performance variables, categories as a tree, MPI_T event
// types and timestamp sources. Works on its own (a singleton MPI job) and
// under `mpiexec -n N` (rank 0 prints). It calls MPI_Init because PERUSE and
// the communicator-bound variables exist only then; the cvar values shown
// are the ones this process got from the environment.
#include <mpi.h>
#include <peruse.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
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

// The nine MPI_T verbosity levels in order: --level N keeps verbosities
// up to the Nth.
const int kVerbosities[9] = {MPI_T_VERBOSITY_USER_BASIC,   MPI_T_VERBOSITY_USER_DETAIL,   MPI_T_VERBOSITY_USER_ALL,
                             MPI_T_VERBOSITY_TUNER_BASIC,  MPI_T_VERBOSITY_TUNER_DETAIL,  MPI_T_VERBOSITY_TUNER_ALL,
                             MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL};
const char* const kVerbosityNames[9] = {"user_basic", "user_detail",  "user_all",      "tuner_basic", "tuner_detail",
                                        "tuner_all",  "mpidev_basic", "mpidev_detail", "mpidev_all"};
// 1..9 for an MPI_T verbosity constant, 10 for an unknown one (shown only by --all).
int level_of(int verbosity) {
  for (int i = 0; i < 9; ++i)
    if (kVerbosities[i] == verbosity) return i + 1;
  return 10;
}
const char* verbosity_name(int verbosity) {
  int l = level_of(verbosity);
  return l <= 9 ? kVerbosityNames[l - 1] : "?";
}

struct Cvar {
  std::string name, desc, value;
  bool shown = true;
  int verbosity, scope;
  MPI_Datatype type;
  bool value_is_string;
};

struct Pvar {
  std::string name, desc;
  bool shown = true;
  int verbosity, cls, bind, readonly, continuous, atomic;
  MPI_Datatype type;
};

struct Category {
  std::string name, desc;
  std::vector<int> cvars, pvars, events, children;
};

struct EventType {
  std::string name, desc;
  bool shown = true;
  int verbosity;
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
      MPI_T_event_get_info(i, b, l, &e.verbosity, nullptr, nullptr, &e.elements, nullptr, nullptr, nullptr, nullptr,
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

// Keeps what --level `level` shows: entries above it are marked hidden and
// leave the categories' lists (categories themselves all stay).
void filter(Info& info, int level) {
  for (Cvar& c : info.cvars) c.shown = level_of(c.verbosity) <= level;
  for (Pvar& p : info.pvars) p.shown = level_of(p.verbosity) <= level;
  for (EventType& e : info.events) e.shown = level_of(e.verbosity) <= level;
  auto keep = [](std::vector<int>& v, auto shown) { std::erase_if(v, [&](int i) { return !shown(size_t(i)); }); };
  for (Category& c : info.categories) {
    keep(c.cvars, [&](size_t i) { return info.cvars[i].shown; });
    keep(c.pvars, [&](size_t i) { return info.pvars[i].shown; });
    keep(c.events, [&](size_t i) { return info.events[i].shown; });
  }
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
  auto shown = [](const auto& v) { return size_t(std::count_if(v.begin(), v.end(), [](auto& e) { return e.shown; })); };
  std::printf("\nControl variables (%zu):\n", shown(info.cvars));
  for (const Cvar& c : info.cvars)
    if (c.shown)
      std::printf("  %-26s = %-12s  %s, scope %s, verbosity %d\n      %s\n", c.name.c_str(),
                  c.value_is_string ? ("\"" + c.value + "\"").c_str() : c.value.c_str(), type_name(c.type),
                  scope_name(c.scope), c.verbosity, c.desc.c_str());
  std::printf("\nPerformance variables (%zu):\n", shown(info.pvars));
  for (const Pvar& p : info.pvars)
    if (p.shown)
      std::printf("  %-40s %-13s %-18s bound to %-12s %s%s%s\n      %s\n", p.name.c_str(), class_name(p.cls),
                  type_name(p.type), bind_name(p.bind), p.continuous ? "continuous " : "",
                  p.readonly ? "readonly " : "", p.atomic ? "atomic" : "", p.desc.c_str());
  std::printf("\nCategories:\n");
  for (int r : roots(info)) print_tree(info, r, 1);
  std::printf("\nMPI_T event types (%zu), bound to a communicator, %d elements each "
              "(unique_id, peer, tag, count, datatype, operation, timestamp):\n",
              shown(info.events), info.events.empty() ? 0 : info.events[0].elements);
  for (const EventType& e : info.events)
    if (e.shown) std::printf("  %s\n", e.name.c_str());
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
  const char* sep = "";
  for (size_t i = 0; i < info.cvars.size(); ++i) {
    const Cvar& c = info.cvars[i];
    if (!c.shown) continue;
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"value\": %s, \"datatype\": %s, \"scope\": %s, "
                "\"verbosity\": %d, \"description\": %s}",
                std::exchange(sep, ","), i, json_string(c.name).c_str(),
                c.value_is_string ? json_string(c.value).c_str() : c.value.c_str(),
                json_string(type_name(c.type)).c_str(), json_string(scope_name(c.scope)).c_str(), c.verbosity,
                json_string(c.desc).c_str());
  }
  std::printf("\n  ],\n  \"pvars\": [");
  sep = "";
  for (size_t i = 0; i < info.pvars.size(); ++i) {
    const Pvar& p = info.pvars[i];
    if (!p.shown) continue;
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"class\": %s, \"datatype\": %s, \"bind\": %s, "
                "\"readonly\": %s, \"continuous\": %s, \"atomic\": %s, \"verbosity\": %d, \"description\": %s}",
                std::exchange(sep, ","), i, json_string(p.name).c_str(), json_string(class_name(p.cls)).c_str(),
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
  sep = "";
  for (size_t i = 0; i < info.events.size(); ++i)
    if (info.events[i].shown)
      std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"elements\": %d, \"bind\": \"communicator\", "
                  "\"description\": %s}",
                  std::exchange(sep, ","), i, json_string(info.events[i].name).c_str(), info.events[i].elements,
                  json_string(info.events[i].desc).c_str());
  std::printf("\n  ],\n  \"sources\": [");
  for (size_t i = 0; i < info.sources.size(); ++i)
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"ticks_per_second\": %lld}", i ? "," : "", i,
                json_string(info.sources[i]).c_str(), info.ticks_per_second);
  std::printf("\n  ]\n}\n");
}

// --parsable: one record per line, `key:value`, where the key is a fixed
// number of colon-separated fields (below) and the value is the rest of the
// line (it may hold colons; backslashes and newlines are escaped as \\ and
// \n). The order is fixed: the version records first, then PERUSE events,
// cvars, pvars, categories, event types and sources, each in MPI_T index
// order, and each entry's fields in the order listed here:
//   version:format:<n>  version:library:<text>  version:mpi:<major.minor>
//   peruse:<name>:id:<n>
//   cvar:<name>:{value,datatype,scope,verbosity,description}:<v>
//   pvar:<name>:{class,datatype,bind,readonly,continuous,atomic,verbosity,description}:<v>
//   category:<name>:{description,cvar,pvar,event,category}:<v> (one record per member)
//   event:<name>:{elements,bind,verbosity,description}:<v>
//   source:<index>:{name,ticks_per_second}:<v>
constexpr int kParsableFormat = 1;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void record(const std::string& key, const std::string& value) {
  std::printf("%s:%s\n", key.c_str(), escaped(value).c_str());
}

void print_parsable(const Info& info) {
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  record("version:format", std::to_string(kParsableFormat));
  record("version:library", info.version);
  record("version:mpi", std::to_string(major) + "." + std::to_string(minor));
  for (auto& [id, name] : info.peruse) record("peruse:" + name + ":id", std::to_string(id));
  auto yes = [](int b) { return b ? "true" : "false"; };
  for (const Cvar& c : info.cvars) {
    if (!c.shown) continue;
    const std::string k = "cvar:" + c.name + ":";
    record(k + "value", c.value);
    record(k + "datatype", type_name(c.type));
    record(k + "scope", scope_name(c.scope));
    record(k + "verbosity", verbosity_name(c.verbosity));
    record(k + "description", c.desc);
  }
  for (const Pvar& p : info.pvars) {
    if (!p.shown) continue;
    const std::string k = "pvar:" + p.name + ":";
    record(k + "class", class_name(p.cls));
    record(k + "datatype", type_name(p.type));
    record(k + "bind", bind_name(p.bind));
    record(k + "readonly", yes(p.readonly));
    record(k + "continuous", yes(p.continuous));
    record(k + "atomic", yes(p.atomic));
    record(k + "verbosity", verbosity_name(p.verbosity));
    record(k + "description", p.desc);
  }
  for (const Category& c : info.categories) {
    const std::string k = "category:" + c.name + ":";
    record(k + "description", c.desc);
    for (int v : c.cvars) record(k + "cvar", info.cvars[size_t(v)].name);
    for (int v : c.pvars) record(k + "pvar", info.pvars[size_t(v)].name);
    for (int v : c.events) record(k + "event", info.events[size_t(v)].name);
    for (int v : c.children) record(k + "category", info.categories[size_t(v)].name);
  }
  for (const EventType& e : info.events) {
    if (!e.shown) continue;
    const std::string k = "event:" + e.name + ":";
    record(k + "elements", std::to_string(e.elements));
    record(k + "bind", "communicator");
    record(k + "verbosity", verbosity_name(e.verbosity));
    record(k + "description", e.desc);
  }
  for (size_t i = 0; i < info.sources.size(); ++i) {
    const std::string k = "source:" + std::to_string(i) + ":";
    record(k + "name", info.sources[i]);
    record(k + "ticks_per_second", std::to_string(info.ticks_per_second));
  }
}

const char kUsage[] = "usage: sonde-info [--json | --parsable] [--all | --level N]\n"
                      "Lists what Sonde exposes to tools: PERUSE events, MPI_T control variables (with their\n"
                      "current values), performance variables, categories (as a tree), event types and sources.\n"
                      "Runs alone or under mpiexec (rank 0 prints).\n"
                      "  --json       one JSON document\n"
                      "  --parsable   one key:value record per line, in a fixed order, the version records\n"
                      "               first (version:format:N, version:library:..., version:mpi:...); the key\n"
                      "               is section:name:field, the value the rest of the line (\\n and \\\\ escaped)\n"
                      "  --level N    only variables and event types of MPI_T verbosity up to level N, 1..9:\n"
                      "               user_basic user_detail user_all tuner_basic tuner_detail tuner_all\n"
                      "               mpidev_basic mpidev_detail mpidev_all\n"
                      "  --all        every variable and event type (the default; overrides --level)\n";

}  // namespace

int main(int argc, char** argv) {
  enum { kText, kJson, kParsable } format = kText;
  int level = 9;
  bool all = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      format = kJson;
    } else if (std::strcmp(argv[i], "--parsable") == 0) {
      format = kParsable;
    } else if (std::strcmp(argv[i], "--all") == 0) {
      all = true;
    } else if (std::strcmp(argv[i], "--level") == 0) {
      char* end = nullptr;
      long v = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : 0;
      if (i + 1 >= argc || *end || v < 1 || v > 9) {
        std::fprintf(stderr, "sonde-info: --level wants a level from 1 to 9 (try --help)\n");
        return 2;
      }
      level = int(v);
      ++i;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "sonde-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (all) level = 10;  // unknown verbosities too
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
    filter(info, level);
    if (format == kJson) print_json(info);
    else if (format == kParsable) print_parsable(info);
    else print_text(info);
    std::fflush(stdout);
  }
  MPI_Finalize();
  MPI_T_finalize();
  return 0;
}
