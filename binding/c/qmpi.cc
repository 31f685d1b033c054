// QMPI's registration calls and the tool tables (binding/c/qmpi.h,
// include/qmpi.h, docs/qmpi.md).
//
// Tools register from constructors, before main and before any thread; the
// list of tools is read from the environment at the first QMPI call.
#include "binding/c/qmpi.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sonde::qmpi {

Function g_first_function[MPI_LAST_FUNC_T];
int g_first_tool[MPI_LAST_FUNC_T];

namespace {

struct Tool {
  std::string name;
  void (*init)(int) = nullptr;
  void* storage = nullptr;
  std::vector<Function> functions = std::vector<Function>(MPI_LAST_FUNC_T);
};

struct Tools {
  std::vector<Tool> list;      // index = tool id - 1
  std::vector<void*> storage;  // index = tool id (0: the library, null)
  bool configured = false;     // a tool list was given
  bool initialized = false;    // the init functions ran
};

// The variables a tool list is read from, first found wins: Sonde's own,
// then the names MPICH reads.
const char* const kListVariables[] = {"SONDE_QMPI_TOOLS", "MPIR_CVAR_QMPI_TOOL_LIST", "MPICH_QMPI_TOOL_LIST",
                                      "MPIR_PARAM_QMPI_TOOL_LIST"};

Tools& tools() {
  static Tools* t = [] {
    auto* t = new Tools();  // never destroyed: tools may call QMPI until exit
    for (const char* var : kListVariables) {
      const char* v = std::getenv(var);
      if (!v || !*v) continue;
      t->configured = true;
      std::string all = v;
      size_t start = 0;
      while (start <= all.size()) {
        size_t end = all.find(':', start);
        if (end == std::string::npos) end = all.size();
        if (end > start)
          t->list.push_back(Tool{all.substr(start, std::min<size_t>(end - start, QMPI_MAX_TOOL_NAME_LENGTH - 1))});
        start = end + 1;
      }
      break;
    }
    t->storage.assign(t->list.size() + 1, nullptr);
    return t;
  }();
  return *t;
}

bool valid_tool(int id) { return id >= 1 && id <= int(tools().list.size()); }
bool valid_function(int f) { return f >= 0 && f < MPI_LAST_FUNC_T; }

// The first tool (lowest id) with each function, else none.
void relink() {
  Tools& t = tools();
  for (int f = 0; f < MPI_LAST_FUNC_T; ++f) {
    g_first_function[f] = nullptr;
    g_first_tool[f] = 0;
    for (size_t i = 0; i < t.list.size(); ++i) {
      if (t.list[i].functions[size_t(f)]) {
        g_first_function[f] = t.list[i].functions[size_t(f)];
        g_first_tool[f] = int(i) + 1;
        break;
      }
    }
  }
}

}  // namespace

void initialize_tools() {
  Tools& t = tools();
  if (t.initialized) return;
  t.initialized = true;
  for (size_t i = 0; i < t.list.size(); ++i)
    if (t.list[i].init) t.list[i].init(int(i) + 1);
  relink();
}

QMPI_Context context(void* calling_address) { return QMPI_Context{tools().storage.data(), calling_address}; }

}  // namespace sonde::qmpi

using namespace sonde::qmpi;

extern "C" {

int QMPI_Register_tool_name(const char* tool_name, void (*init_function_ptr)(int tool_id)) {
  if (!tool_name || !init_function_ptr) return MPI_ERR_ARG;
  Tools& t = tools();
  if (!t.configured) return MPI_SUCCESS;  // no tool list: nothing runs, as MPICH
  bool found = false;
  for (Tool& tool : t.list) {
    if (tool.name == tool_name && !tool.init) {  // every unclaimed slot of that name
      tool.init = init_function_ptr;
      found = true;
    }
  }
  return found ? MPI_SUCCESS : MPI_ERR_ARG;
}

int QMPI_Register_tool_storage(int tool_id, void* tool_storage) {
  if (!valid_tool(tool_id)) return MPI_ERR_ARG;
  tools().storage[size_t(tool_id)] = tool_storage;
  return MPI_SUCCESS;
}

int QMPI_Register_function(int calling_tool_id, enum QMPI_Functions_enum function_enum, void (*function_ptr)(void)) {
  if (!valid_tool(calling_tool_id) || !valid_function(function_enum)) return MPI_ERR_ARG;
  tools().list[size_t(calling_tool_id) - 1].functions[size_t(function_enum)] = function_ptr;
  if (tools().initialized) relink();  // registered later than MPI_Init: effective from now
  return MPI_SUCCESS;
}

int QMPI_Get_function(int calling_tool_id, enum QMPI_Functions_enum function_enum, void (**function_ptr)(void),
                      int* next_tool_id) {
  if (calling_tool_id < 0 || calling_tool_id > int(tools().list.size()) || !valid_function(function_enum) ||
      !function_ptr || !next_tool_id)
    return MPI_ERR_ARG;
  Tools& t = tools();
  for (size_t i = size_t(calling_tool_id); i < t.list.size(); ++i) {
    if (Function f = t.list[i].functions[size_t(function_enum)]) {
      *function_ptr = f;
      *next_tool_id = int(i) + 1;
      return MPI_SUCCESS;
    }
  }
  *function_ptr = kLibrary[function_enum];
  *next_tool_id = 0;
  return MPI_SUCCESS;
}

int QMPI_Get_tool_storage(QMPI_Context context, int tool_id, void** storage) {
  if (!storage || tool_id < 0 || tool_id > int(tools().list.size()) || !context.storage_stack) return MPI_ERR_ARG;
  *storage = context.storage_stack[tool_id];
  return MPI_SUCCESS;
}

int QMPI_Get_calling_address(QMPI_Context context, void** address) {
  if (!address) return MPI_ERR_ARG;
  *address = context.calling_address;
  return MPI_SUCCESS;
}

}  // extern "C"
